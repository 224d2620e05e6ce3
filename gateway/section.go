package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/internal/printable"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// Separator joins a server's name and a tool's name into the name the tool
// is offered under: NAME__TOOL.
const Separator = "__"

// maxSummary bounds the instructions a summary shows.
const maxSummary = 200

// ToolName returns the name server's tool is offered under: server, "__"
// and the tool's name, with characters tool names may not have replaced by
// '_', cut to 64 bytes with a hash of the whole when longer.
func ToolName(server, tool string) string {
	var b strings.Builder
	for _, r := range server + Separator + tool {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > tools.MaxNameLen {
		sum := sha256.Sum256([]byte(server + Separator + tool))
		name = name[:tools.MaxNameLen-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return name
}

// sectionKey turns a name into a section key: lower case, characters keys
// may not have replaced by '-'.
func sectionKey(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	key := strings.TrimLeft(b.String(), "_-")
	if key == "" {
		key = "tool"
	}
	if len(key) > 60 {
		key = key[:60]
	}
	return key
}

// entry is one upstream tool as the gateway offers it.
type entry struct {
	up     *Upstream
	tool   *sdk.Tool
	t      *tools.Tool
	path   string // its section's path
	server string // its server's section's path
}

// toolsKey is the key of the section that holds a server's tools.
const toolsKey = "tools"

// Section returns the gateway's section, built from the servers' manifests
// as they are now (with no server, a section that says so and offers no
// tool): a section (key Options.Key, default "mcp") shown in full
// that carries find_tools and call_tool, with a summarized section per
// server, whose summary gives the server's instructions (shortened) and
// its tools' names, and whose brief (what a token budget may show instead)
// counts them. Opening a server
// (open_sections with key "mcp.NAME") offers all its tools, as NAME__TOOL
// with the server's schemas; opening "mcp.NAME.tools.TOOL" offers that tool
// alone. A tool's result is cut to Options.OutputBudget, its whole saved
// under OutputDir of the call's file system. A section is immutable: call
// Section again after a change (Subscribe) and replace it.
func (g *Gateway) Section() (*section.Section, error) {
	if len(g.ups) == 0 {
		// Nothing to find or call: find_tools and call_tool are not
		// offered.
		return section.New(section.Spec[section.None]{
			Key:   g.key,
			Title: "MCP servers",
			Body:  "No MCP server is configured, so no MCP tool is offered.",
		}), nil
	}
	var servers []*section.Section
	var all []entry
	names := map[string]bool{FindToolsName: true, CallToolName: true}
	for _, u := range g.ups {
		sec, entries := g.serverSection(u, names)
		servers = append(servers, sec)
		all = append(all, entries...)
	}
	find, err := newFindTools(g, all)
	if err != nil {
		return nil, fmt.Errorf("gateway: section: %w", err)
	}
	call, err := newCallTool(g, all)
	if err != nil {
		return nil, fmt.Errorf("gateway: section: %w", err)
	}
	return section.New(section.Spec[section.None]{
		Key:   g.key,
		Title: "MCP servers",
		Body: fmt.Sprintf("The tools of %d MCP servers open on demand. Open a server's section to get all its tools "+
			"(named SERVER%sTOOL), or one tool's section for that tool alone; %s searches every tool and opens the best matches; "+
			"%s calls an open tool by server and tool name.", len(g.ups), Separator, FindToolsName, CallToolName),
		Tools:    []*tools.Tool{find, call},
		Children: servers,
	}), nil
}

// takenBefore returns the tool names the servers before u offer, as
// Section names them: with it, serverSection gives u's tools the names
// Section gives them.
func (g *Gateway) takenBefore(u *Upstream) map[string]bool {
	taken := map[string]bool{FindToolsName: true, CallToolName: true}
	for _, o := range g.ups {
		if o == u {
			break
		}
		g.serverSection(o, taken)
	}
	return taken
}

// serverSection builds one server's section and its tools. taken holds
// the tool names the sections built before it offer; each of its tools
// adds its own.
func (g *Gateway) serverSection(u *Upstream, taken map[string]bool) (*section.Section, []entry) {
	m := u.Manifest()
	key := sectionKey(u.cfg.Name)
	server := g.key + "." + key
	base := server + "." + toolsKey
	var entries []entry
	used := map[string]bool{}
	declared := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(m.LeftOut)) {
		g.log.Warn("gateway: a tool left out", "server", u.cfg.Name, "tool", name, "err", m.LeftOut[name])
	}
	for _, tool := range m.Tools {
		if declared[tool.Name] {
			g.log.Warn("gateway: a tool left out", "server", u.cfg.Name, "tool", tool.Name, "err", "the server lists this name twice; the first one is offered")
			continue
		}
		declared[tool.Name] = true
		name := uniqueName(ToolName(u.cfg.Name, tool.Name), taken)
		t, err := proxyTool(u, tool, name, g.budget)
		if err != nil {
			g.log.Warn("gateway: a tool left out", "server", u.cfg.Name, "tool", tool.Name, "err", err)
			continue
		}
		if name != ToolName(u.cfg.Name, tool.Name) {
			g.log.Warn("gateway: a tool renamed", "server", u.cfg.Name, "tool", tool.Name, "name", name,
				"why", ToolName(u.cfg.Name, tool.Name)+" is the name of another tool")
		}
		taken[name] = true
		k := sectionKey(tool.Name)
		for n := 2; used[k]; n++ {
			k = sectionKey(tool.Name) + "-" + strconv.Itoa(n)
		}
		used[k] = true
		entries = append(entries, entry{up: u, tool: tool, t: t, path: base + "." + k, server: server})
	}
	paths := make([]string, len(entries))
	names := make([]string, len(entries))
	for i, e := range entries {
		paths[i], names[i] = e.path, e.tool.Name
	}
	children := make([]*section.Section, len(entries))
	for i, e := range entries {
		children[i] = section.New(section.Spec[section.None]{
			Key:     e.path[len(base)+1:],
			Title:   printable.String(e.tool.Name), // a server's; a title is one line
			Summary: section.Literal(firstSentence(e.tool.Description, 120)),
			Tools:   []*tools.Tool{e.t},
			Visibility: visibility.FromSession(func(sess *session.Session) visibility.Mode {
				return toolMode(visibility.Get(sess), e.path, paths)
			}),
		})
	}
	about := "MCP server " + u.cfg.Name
	if m.Version != "" {
		about += " " + m.Version
	}
	summary := about
	if ins := shorten(m.Instructions, maxSummary); ins != "" {
		summary += ": " + ins
	}
	brief := about + ": "
	body := about + "."
	if m.Instructions != "" {
		body = about + ". Its instructions:\n\n" + m.Instructions
	}
	switch {
	case m.ConfigHash == "" && u.Starting():
		summary += ". It is starting: its tools are offered once it has listed them."
		brief += "starting."
		body += "\n\nIt is starting: its tools join once it has listed them (the tool list changes), or " + FindToolsName + " and " + CallToolName + " wait for it."
	case m.ConfigHash == "":
		summary += fmt.Sprintf(". Its tools are not known yet: it did not start (%s); %s and %s try it again.", shorten(errText(u.Err()), maxSummary), FindToolsName, CallToolName)
		brief += "not started yet."
		body += fmt.Sprintf("\n\nIts tools are not known yet: it did not start (%s); %s and %s try it again, and its tools join once it has listed them.", errText(u.Err()), FindToolsName, CallToolName)
	default:
		summary += fmt.Sprintf(". Tools: %s.", strings.Join(names, ", "))
		brief += fmt.Sprintf("%d tools.", len(entries))
		if len(m.TaskOnly) > 0 {
			body += "\n\n" + taskOnlyNote(m.TaskOnly)
		}
		if len(m.LeftOut) > 0 {
			body += "\n\n" + leftOutNote(m.LeftOut)
		}
	}
	// Every text but the keys comes from the server (its instructions,
	// version, tool names, errors): it shows as written.
	return section.New(section.Spec[section.None]{
		Key:        key,
		Title:      u.cfg.Name,
		Body:       section.Literal(body),
		Summary:    section.Literal(summary),
		Brief:      section.Literal(brief),
		Priority:   u.cfg.Priority,
		Visibility: visibility.Const(visibility.Summary),
		// Tools not known yet join when the server has listed them: the
		// section opens in place, so that they are offered then.
		OpensInPlace: m.ConfigHash == "",
		// The tools are one child, so that the summary's suffix names it
		// rather than every tool: the summary names them, the brief counts
		// them, and a budget chooses.
		Children: []*section.Section{section.New(section.Spec[section.None]{
			Key:      toolsKey,
			Title:    "Tools of " + u.cfg.Name,
			Children: children,
		})},
	}), entries
}

// leftOutNote says which tools are not offered as their schemas are too
// large, and why.
func leftOutNote(leftOut map[string]string) string {
	var b strings.Builder
	b.WriteString("Not offered, as their schemas are larger than unfold takes:")
	for _, name := range slices.Sorted(maps.Keys(leftOut)) {
		fmt.Fprintf(&b, "\n- %s: %s", name, leftOut[name])
	}
	return b.String()
}

// uniqueName returns name, or when taken holds it already, name with the
// first free suffix "-2", "-3", ... (cut to fit the length tool names may
// have): the same servers and tools, in the same order, get the same names.
func uniqueName(name string, taken map[string]bool) string {
	out := name
	for n := 2; taken[out]; n++ {
		suffix := "-" + strconv.Itoa(n)
		out = name[:min(len(name), tools.MaxNameLen-len(suffix))] + suffix
	}
	return out
}

// proxyTool is the unfold tool, called name, that calls tool on u; its
// result is cut to budget tokens (see fitResult).
func proxyTool(u *Upstream, tool *sdk.Tool, name string, budget int) (*tools.Tool, error) {
	input, err := json.Marshal(tool.InputSchema)
	if err != nil || string(input) == "null" {
		input = []byte(`{"type":"object"}`)
	}
	if len(input) > MaxSchema {
		return nil, schemaTooLarge("input", len(input))
	}
	// MCP requires an object schema (and the SDK that serves the tool
	// again refuses any other): "type" must be "object" itself, not a
	// list that holds it.
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(input, &top); err != nil || top.Type != "object" {
		got, _ := json.Marshal(top.Type)
		return nil, fmt.Errorf(`input schema: MCP tools take an object: want "type": "object" at the top, got %s`, got)
	}
	var output json.RawMessage
	if tool.OutputSchema != nil {
		output, _ = json.Marshal(tool.OutputSchema)
		if len(output) > MaxSchema {
			return nil, schemaTooLarge("output", len(output))
		}
	}
	desc := strings.TrimSpace(tool.Description)
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the MCP server %s.", tool.Name, u.cfg.Name)
	}
	upstreamName := tool.Name
	t, err := tools.NewRaw(name, desc, input, output,
		func(ctx context.Context, tc tools.Context, args json.RawMessage) (tools.Result, error) {
			res, err := u.CallTool(ctx, upstreamName, args)
			if err != nil {
				if ctx.Err() != nil {
					return tools.Result{Message: err.Error()}, err
				}
				return tools.Result{Message: err.Error()}, nil
			}
			// The structured content counts too: an MCP client gets it
			// beside the text, and a small text may come with megabytes of
			// it; unless the text says it already (MCP asks servers to send
			// it as text too), when it counts once. A result cut to the
			// budget goes back as text alone.
			text := ResultText(res)
			if cut, ok := fitResult(ctx, resultText(res, !repeatsText(res)), budget, name, tc.FS); ok {
				res = &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: cut}}, IsError: res.IsError}
				text = cut
			}
			return tools.Result{Message: text, Value: res, Success: !res.IsError}, nil
		})
	if err != nil || tool.Annotations == nil {
		return t, err
	}
	return t.WithHints(hints(tool.Annotations)), nil
}

// hints are an upstream tool's annotations, its hints left out read as MCP
// says to read them (destructive and open-world unless it says not).
func hints(a *sdk.ToolAnnotations) tools.Hints {
	return tools.Hints{
		ReadOnly:    a.ReadOnlyHint,
		Destructive: a.DestructiveHint == nil || *a.DestructiveHint,
		Idempotent:  a.IdempotentHint,
		OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint,
	}
}

// ResultText is a call's result as text, for models that read text: the
// text blocks as they are, other blocks described, the structured content
// as JSON when no block carries text.
func ResultText(res *sdk.CallToolResult) string { return resultText(res, false) }

// resultText is ResultText, with the structured content as indented JSON
// after the blocks even when some carry text if structured is set.
func resultText(res *sdk.CallToolResult, structured bool) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			hasText = true
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s (%s)]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
				hasText = true
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource: %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob)))
			}
		}
	}
	if (structured || !hasText) && res.StructuredContent != nil {
		marshal := json.Marshal
		if structured {
			// One line per value, so that a cut keeps whole lines of it.
			marshal = func(v any) ([]byte, error) { return json.MarshalIndent(v, "", " ") }
		}
		if data, err := marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(data))
		}
	}
	if len(parts) == 0 {
		return "(no content)"
	}
	return strings.Join(parts, "\n")
}

// repeatsText reports whether res's structured content says what its text
// blocks say: the text is the structured content as JSON (as MCP asks
// servers to send it), or the structured content is an object of one
// member whose value the text is, as a string or as JSON (the TypeScript
// SDK's servers send {"content": TEXT}).
func repeatsText(res *sdk.CallToolResult) bool {
	if res.StructuredContent == nil {
		return false
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	if len(texts) == 0 {
		return false
	}
	text := strings.Join(texts, "\n")
	same := func(v any) bool {
		if s, ok := v.(string); ok && s == text {
			return true
		}
		var parsed any
		if json.Unmarshal([]byte(text), &parsed) != nil {
			return false
		}
		a, err1 := json.Marshal(parsed)
		b, err2 := json.Marshal(v)
		return err1 == nil && err2 == nil && string(a) == string(b)
	}
	if same(res.StructuredContent) {
		return true
	}
	// The SDK gives the structured content as it decoded it; another
	// value is read through JSON.
	var obj map[string]any
	if m, ok := res.StructuredContent.(map[string]any); ok {
		obj = m
	} else if data, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(data, &obj) != nil {
		return false
	}
	if len(obj) != 1 {
		return false
	}
	for _, v := range obj {
		return same(v)
	}
	return false
}

// shorten returns the first paragraph of s on one line, cut at a word
// boundary to at most n bytes.
func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return strings.TrimRight(s, ".")
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	return strings.TrimRight(s[:cut], " ,;:.") + "..."
}

// firstSentence returns the first sentence of s, shortened to n bytes.
func firstSentence(s string, n int) string {
	s = shorten(s, len(s)+1)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "A tool."
	}
	return shorten(s, n) + "."
}

func errText(err error) string {
	if err == nil {
		return "not started yet"
	}
	return err.Error()
}

// toolMode is a tool section's mode when the session has no override for
// it: SUMMARY when a sibling was opened on its own (the server was opened
// tool by tool), FULL otherwise (the server was opened whole).
func toolMode(ov visibility.Overrides, path string, siblings []string) visibility.Mode {
	for _, p := range siblings {
		if m, ok := ov.Mode(p); ok && p != path && m == visibility.Full {
			return visibility.Summary
		}
	}
	return visibility.Full
}

// opened reports whether the tool at path is offered in sess: its server's
// section was opened, and the tool shows in full.
func opened(sess *session.Session, serverPath, path string, siblings []string) bool {
	ov := visibility.Get(sess)
	if m, ok := ov.Mode(serverPath); !ok || m != visibility.Full {
		return false
	}
	if m, ok := ov.Mode(path); ok {
		return m == visibility.Full
	}
	return toolMode(ov, path, siblings) == visibility.Full
}

package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// The gateway's own tools.
const (
	FindToolsName = "find_tools"
	CallToolName  = "call_tool"
)

// Search limits.
const (
	defaultMatches = 5
	maxMatches     = 20
)

// BM25 parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// nameWeight repeats a tool's name tokens, so that a query word in the
// name counts more than one in the description.
const nameWeight = 3

// index ranks tools by BM25 over their names, descriptions and argument
// names.
type index struct {
	docs  [][]string // tokens of each tool
	df    map[string]int
	avgDL float64
}

func newIndex(entries []entry) *index {
	ix := &index{df: map[string]int{}}
	total := 0
	for _, e := range entries {
		var doc []string
		name := tokenize(e.tool.Name + " " + e.up.cfg.Name)
		for range nameWeight {
			doc = append(doc, name...)
		}
		doc = append(doc, tokenize(e.tool.Title+" "+e.tool.Description)...)
		doc = append(doc, tokenize(strings.Join(argNames(e.tool.InputSchema), " "))...)
		ix.docs = append(ix.docs, doc)
		total += len(doc)
		seen := map[string]bool{}
		for _, w := range doc {
			if !seen[w] {
				seen[w] = true
				ix.df[w]++
			}
		}
	}
	if len(entries) > 0 {
		ix.avgDL = float64(total) / float64(len(entries))
	}
	return ix
}

// scored is a tool's position in the entries and its score.
type scored struct {
	i     int
	score float64
}

// search returns the tools with a positive score, best first.
func (ix *index) search(query string) []scored {
	terms := tokenize(query)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	n := float64(len(ix.docs))
	var out []scored
	for i, doc := range ix.docs {
		tf := map[string]int{}
		for _, w := range doc {
			tf[w]++
		}
		s := 0.0
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(doc))/ix.avgDL))
		}
		if s > 0 {
			out = append(out, scored{i, s})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	return out
}

// tokenize splits text into lower-case words, splitting camelCase,
// snake_case and kebab-case names too, and drops a plural s.
func tokenize(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			w := strings.ToLower(string(word))
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				w = w[:len(w)-1]
			}
			out = append(out, w)
			word = word[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// argNames lists the property names of an input schema, nested ones too.
func argNames(schema any) []string {
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > 4 {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, p := range props {
				out = append(out, name)
				walk(p, depth+1)
			}
		}
		if items, ok := m["items"]; ok {
			walk(items, depth+1)
		}
	}
	// Schemas of a manifest read from the cache are maps; fresh ones may
	// be any JSON value: go through JSON to be sure.
	var doc any
	if data, err := json.Marshal(schema); err == nil && json.Unmarshal(data, &doc) == nil {
		walk(doc, 0)
	}
	slices.Sort(out)
	return out
}

// FindToolsInput is the input of find_tools.
type FindToolsInput struct {
	Query string `json:"query" description:"Words for what the tool should do, such as \"read a file\" or \"create entities\"."`
	Limit int    `json:"limit,omitempty" description:"How many tools to open at most (default 5, at most 20)."`
}

// newFindTools returns find_tools over entries: it ranks every upstream
// tool, open or not, and opens the best matches through the disclosure
// that calls it (an expansion by key), answering with their schemas.
func newFindTools(g *Gateway, entries []entry) (*tools.Tool, error) {
	ix := newIndex(entries)
	desc := "Search the tools of the MCP servers (" + g.serverList() + ") by what they do: " +
		"ranks every tool by its name, description and argument names, opens the best matches " +
		"(they are offered as SERVER" + Separator + "TOOL from then on) and answers with their descriptions and input schemas. " +
		"Call them by name, or with " + CallToolName + "."
	t, err := tools.New(FindToolsName, desc, func(ctx context.Context, _ tools.Context, in FindToolsInput) (string, error) {
		if strings.TrimSpace(in.Query) == "" {
			return "", errors.New("give a query: words for what the tool should do")
		}
		entries, ix := entries, ix
		more, starting := g.retry(ctx, "")
		if len(more) > 0 {
			entries = append(slices.Clip(entries), more...)
			ix = newIndex(entries)
		}
		note := stillStarting(starting)
		limit := in.Limit
		if limit <= 0 {
			limit = defaultMatches
		}
		limit = min(limit, maxMatches)
		hits := ix.search(in.Query)
		if len(hits) == 0 {
			// Counted now: a server started meanwhile has its tools.
			msg := fmt.Sprintf("no tool matches %q; the servers are %s; try other words", in.Query, g.serverList())
			if note != "" {
				msg += ". " + note
			}
			return "", errors.New(msg)
		}
		hits = hits[:min(limit, len(hits))]
		var b strings.Builder
		keys := make([]string, 0, len(hits))
		fmt.Fprintf(&b, "Tools matching %q, best first:", in.Query)
		for _, h := range hits {
			e := entries[h.i]
			keys = append(keys, e.path)
			fmt.Fprintf(&b, "\n\n%s (server %s, tool %s): %s\nInput schema: %s", e.t.Name(), e.up.cfg.Name, e.tool.Name,
				shorten(e.tool.Description, 400), compactJSON(e.t.InputSchema()))
		}
		if note != "" {
			b.WriteString("\n\n" + note)
		}
		return "", tools.Halt(&prompt.VisibilityExpansionError{Keys: keys, Reason: "find_tools: " + in.Query, Answer: b.String()})
	})
	if err != nil {
		return nil, err
	}
	// It opens tools (the session's tool list grows) and calls none.
	return t.WithHints(tools.Hints{Idempotent: true}), nil
}

// serverList names the servers with the number of tools each offers.
func (g *Gateway) serverList() string {
	servers := make([]string, len(g.ups))
	for i, u := range g.ups {
		servers[i] = fmt.Sprintf("%s (%d tools)", u.cfg.Name, len(u.Manifest().Tools))
	}
	return strings.Join(servers, ", ")
}

// retryWait bounds how long a call of find_tools or call_tool waits for
// the servers it starts: a server that hangs at its start keeps starting
// in the background, and the call goes on with what is known. Ten
// seconds, because a server npx fetches for the first time takes a few to
// start, and a call soon after unfold started should find its tools.
const retryWait = 10 * time.Second

// retry starts again the servers whose tools are not known yet (all of
// them, or the one called only) that failed to start, in the background,
// and waits at most retryWait for them and for those being started. It
// returns the entries of those that listed their tools, and the names of
// those still starting. A server that fails again waits longer before the
// next try (see [Upstream]), so that a dead one is not hammered.
func (g *Gateway) retry(ctx context.Context, only string) (more []entry, starting []string) {
	var ups []*Upstream
	var waits []<-chan struct{}
	for _, u := range g.ups {
		if only != "" && u.cfg.Name != only || !u.unlisted() {
			continue
		}
		ups = append(ups, u)
		waits = append(waits, u.begin())
	}
	if len(ups) == 0 {
		return nil, nil
	}
	wctx, cancel := context.WithTimeout(ctx, retryWait)
	defer cancel()
	for i, u := range ups {
		if waits[i] != nil {
			select {
			case <-waits[i]:
			case <-wctx.Done():
			}
		}
		switch {
		case u.Starting():
			starting = append(starting, u.cfg.Name)
		case !u.unlisted():
			_, es := g.serverSection(u, g.takenBefore(u))
			more = append(more, es...)
		}
	}
	return more, starting
}

// stillStarting says which servers are still starting, for an answer.
func stillStarting(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("Still starting, not searched yet: %s; ask again in a moment for its tools.", strings.Join(names, ", "))
}

// compactJSON removes insignificant space.
func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	data, _ := json.Marshal(v)
	b.Write(data)
	return b.String()
}

// CallToolInput is the input of call_tool.
type CallToolInput struct {
	Server    string         `json:"server" description:"The MCP server's name."`
	Tool      string         `json:"tool" description:"The tool's name on that server (not SERVER__TOOL)."`
	Arguments map[string]any `json:"arguments,omitempty" description:"The tool's arguments, as its input schema says."`
}

// newCallTool returns call_tool: it calls an open tool by server and tool
// name, for clients that do not see tools added after the start.
func newCallTool(g *Gateway, entries []entry) (*tools.Tool, error) {
	desc := "Call a tool of an MCP server by server and tool name, with its arguments (checked against the tool's input schema). " +
		"The tool must be open: open it with " + FindToolsName + " or open_sections first."
	ct, err := tools.NewRaw(CallToolName, desc, callToolSchema(), nil, func(ctx context.Context, tc tools.Context, args json.RawMessage) (tools.Result, error) {
		var in CallToolInput
		if err := json.Unmarshal(args, &in); err != nil {
			return tools.Result{Message: "Invalid arguments: " + err.Error()}, nil
		}
		entries := entries
		more, starting := g.retry(ctx, in.Server)
		if len(more) > 0 {
			entries = append(slices.Clip(entries), more...)
		}
		i := slices.IndexFunc(entries, func(e entry) bool { return e.up.cfg.Name == in.Server && e.tool.Name == in.Tool })
		if i < 0 {
			u, ok := g.Upstream(in.Server)
			if !ok {
				return tools.Result{Message: fmt.Sprintf("No MCP server %q; the servers are %s.", in.Server, serverNames(g))}, nil
			}
			if len(starting) > 0 {
				return tools.Result{Message: fmt.Sprintf("The MCP server %s is still starting, so its tools are not known yet; call again in a moment.", in.Server)}, nil
			}
			if u.unlisted() {
				return tools.Result{Message: fmt.Sprintf("The MCP server %s did not start, so its tools are not known: %v", in.Server, u.Err())}, nil
			}
			if slices.Contains(u.Manifest().TaskOnly, in.Tool) {
				return tools.Result{Message: fmt.Sprintf("The tool %q of %s runs only as an MCP task, which unfold does not make, so it cannot be called here.", in.Tool, in.Server)}, nil
			}
			if why, ok := u.Manifest().LeftOut[in.Tool]; ok {
				return tools.Result{Message: fmt.Sprintf("The tool %q of %s is not offered: its %s.", in.Tool, in.Server, why)}, nil
			}
			return tools.Result{Message: fmt.Sprintf("The MCP server %s has no tool %q; %s lists its tools.", in.Server, in.Tool, FindToolsName)}, nil
		}
		e := entries[i]
		var siblings []string
		for _, o := range entries {
			if o.up == e.up {
				siblings = append(siblings, o.path)
			}
		}
		if !opened(tc.Session, e.server, e.path, siblings) {
			return tools.Result{Message: fmt.Sprintf("The tool %s of %s is not open: open it with %s, or open_sections with key %q, then call it.", in.Tool, in.Server, FindToolsName, e.path)}, nil
		}
		inner, _ := json.Marshal(in.Arguments)
		if in.Arguments == nil {
			inner = []byte("{}")
		}
		return e.t.Call(ctx, tc, inner)
	})
	if err != nil {
		return nil, err
	}
	// It runs whichever open tool it is asked to: it may do anything.
	return ct.WithHints(tools.AssumedHints), nil
}

// callToolSchema is call_tool's input schema.
func callToolSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"server":{"type":"string","description":"The MCP server's name."},` +
		`"tool":{"type":"string","description":"The tool's name on that server (not SERVER__TOOL)."},` +
		`"arguments":{"type":["object","null"],"description":"The tool's arguments, as its input schema says."}},` +
		`"required":["server","tool"],"additionalProperties":false}`)
}

func serverNames(g *Gateway) string {
	var names []string
	for _, u := range g.ups {
		names = append(names, u.cfg.Name)
	}
	return strings.Join(names, ", ")
}

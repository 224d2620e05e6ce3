package mcp

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/tools"
)

// composePrompt builds one prompt from the template's top-level sections and
// the orchestrator's environment sections, each carrying its environment's
// tool, and binds params to it.
func (s *Server) composePrompt(t *prompt.Template, params []any) (*prompt.Prompt, error) {
	var roots []*section.Section
	for _, path := range t.Paths() {
		if strings.Contains(path, ".") {
			continue
		}
		sec, _ := t.Section(path)
		roots = append(roots, sec)
	}
	envSecs, err := s.o.Sections()
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]string, len(s.names))
	for _, name := range s.names {
		if key, err := orchestrator.SectionKey(name); err == nil {
			byKey[key] = name
		}
	}
	for _, sec := range envSecs {
		name, ok := byKey[sec.Key()]
		if !ok {
			roots = append(roots, sec) // the orchestrator's own screen
			continue
		}
		roots = append(roots, withTool(sec, s.envTools[name]))
	}
	full, err := prompt.New(t.Namespace(), t.Key(), roots...)
	if err != nil {
		return nil, fmt.Errorf("prompt with the environments' sections: %w", err)
	}
	return full.Bind(params...)
}

// withTool returns an environment's section with the server's tool for it
// in place of a command tool of the same name.
func withTool(sec *section.Section, t *tools.Tool) *section.Section {
	ts := slices.DeleteFunc(slices.Clone(sec.Tools()), func(x *tools.Tool) bool { return x.Name() == t.Name() })
	return section.New(section.Spec[section.None]{
		Key:        sec.Key(),
		Title:      sec.Title(),
		Content:    func(section.None) (string, error) { return sec.Body(nil) },
		Summary:    sec.Summary(),
		Visibility: sec.Selector(),
		Priority:   sec.Priority(),
		Children:   sec.Children(),
		Tools:      append(ts, t),
	})
}

// expand opens the sections an open_sections call asked for when they carry
// tools: it applies the overrides, renders again (the new tools are offered
// and clients notified), and answers with the sections' content.
func (s *Server) expand(err error) (*sdk.CallToolResult, error) {
	var xe *prompt.VisibilityExpansionError
	if !errors.As(err, &xe) {
		return nil, err
	}
	if err := prompt.ApplyExpansion(s.sess, err); err != nil {
		return nil, err
	}
	if err := s.sync(); err != nil {
		return nil, err
	}
	// The tools the opened sections carry, from the sections themselves: a
	// diff of the shared tool list would mix in other clients' openings.
	var added []string
	for _, key := range xe.Keys {
		if sec, ok := s.prompt.Template().Section(key); ok {
			added = appendTools(added, sec)
		}
	}
	slices.Sort(added)
	added = slices.Compact(added)
	var b strings.Builder
	fmt.Fprintf(&b, "Opened %s.", strings.Join(xe.Keys, ", "))
	if len(added) > 0 {
		fmt.Fprintf(&b, " New tools: %s (the tool list changed).", strings.Join(added, ", "))
	}
	for _, key := range xe.Keys {
		text, err := s.prompt.Standalone(key)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	return textResult(false, b.String()), nil
}

// getPrompt answers prompts/get with the prompt as rendered now.
func (s *Server) getPrompt() (*sdk.GetPromptResult, error) {
	text, err := s.promptText()
	if err != nil {
		return nil, err
	}
	return &sdk.GetPromptResult{
		Description: "The prompt with the environments' screens, as rendered now.",
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}},
	}, nil
}

// promptText renders the prompt again, so screens are current.
func (s *Server) promptText() (string, error) {
	if err := s.sync(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rendered.Text(), nil
}

// appendTools appends the names of the tools sec and its subtree declare.
func appendTools(names []string, sec *section.Section) []string {
	for _, t := range sec.Tools() {
		names = append(names, t.Name())
	}
	for _, c := range sec.Children() {
		names = appendTools(names, c)
	}
	return names
}

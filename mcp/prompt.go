package mcp

import (
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
)

// composePrompt builds one prompt from the template's top-level sections
// (when there is a template), the orchestrator's environment sections, each
// carrying its environment's command tool, and the gateway's section (when
// there is a gateway), and binds the params to it.
func (s *conn) composePrompt() (*prompt.Prompt, error) {
	var roots []*section.Section
	ns, key := "unfold", "mcp"
	if t := s.tmpl; t != nil {
		ns, key = t.Namespace(), t.Key()
		for _, path := range t.Paths() {
			if strings.Contains(path, ".") {
				continue
			}
			sec, _ := t.Section(path)
			roots = append(roots, sec)
		}
	}
	envSecs, err := s.o.Sections()
	if err != nil {
		return nil, err
	}
	roots = append(roots, envSecs...)
	if s.gw != nil {
		sec, err := s.gw.Section()
		if err != nil {
			return nil, err
		}
		roots = append(roots, sec)
	}
	full, err := prompt.New(ns, key, roots...)
	if err != nil {
		return nil, fmt.Errorf("prompt with the environments' sections: %w", err)
	}
	return full.Bind(s.params...)
}

// getPrompt answers prompts/get with the prompt as rendered now.
func (s *conn) getPrompt() (*sdk.GetPromptResult, error) {
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
func (s *conn) promptText() (string, error) {
	if err := s.sync(); err != nil {
		return "", err
	}
	return s.disc.Rendered(0).Text(), nil
}

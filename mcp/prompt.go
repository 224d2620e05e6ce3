package mcp

import (
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
)

// composePrompt builds one prompt from the template's top-level sections and
// the orchestrator's environment sections, each carrying its environment's
// command tool, and binds params to it.
func (s *conn) composePrompt(t *prompt.Template, params []any) (*prompt.Prompt, error) {
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
	roots = append(roots, envSecs...)
	full, err := prompt.New(t.Namespace(), t.Key(), roots...)
	if err != nil {
		return nil, fmt.Errorf("prompt with the environments' sections: %w", err)
	}
	return full.Bind(params...)
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

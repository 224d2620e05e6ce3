package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// HelpInput is the input of the help tool.
type HelpInput struct {
	Query string `json:"query,omitempty" description:"Optional: an environment, a command or a word to look for; omit it for everything."`
}

// newHelpTool returns the help tool: an overview of the environments (each
// one's summary and help), the resources and, with a prompt, the summarized
// sections; with a query, only what matches it.
func (s *Server) newHelpTool() (*tools.Tool, error) {
	desc := "Describe what this server offers: its environments and their commands, the resources, and the summarized sections that " +
		prompt.OpenSectionsName + " opens. Give a query to see only what matches it."
	return tools.New(HelpToolName, desc, func(_ context.Context, _ tools.Context, in HelpInput) (string, error) {
		return s.helpText(strings.TrimSpace(in.Query)), nil
	})
}

func (s *Server) helpText(query string) string {
	q := strings.ToLower(query)
	matches := func(texts ...string) bool {
		for _, t := range texts {
			if strings.Contains(strings.ToLower(t), q) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	found := 0
	if query == "" {
		fmt.Fprintf(&b, "Environments: %s. Each is a tool of the same name: give it a command (and optionally a timeout in seconds); "+
			"it returns the output, whether the command succeeded and the environment's screen. "+
			"Screens are also resources: %s<name>.\n", joinOr(s.names, "none"), ScreenURIPrefix)
	}
	for _, name := range s.names {
		sum, _ := s.o.Summary(name)
		var help string
		if scr, ok := s.o.Screen(name); ok {
			help = Help(scr.Content)
		}
		if query != "" && !matches(name, sum, help) {
			continue
		}
		found++
		s.mu.Lock()
		_, offered := s.offered[name]
		s.mu.Unlock()
		note := ""
		if !offered {
			note = fmt.Sprintf("\n\nIts tool is offered once its section is open: call %s with key %q.", prompt.OpenSectionsName, sectionKey(name))
		}
		fmt.Fprintf(&b, "\n## %s: %s%s\n\n%s\n", name, sum, note, help)
	}
	if sections := s.summarized(); len(sections) > 0 {
		var lines []string
		for _, sec := range sections {
			if query == "" || matches(sec.Path, sec.Title, sec.summary) {
				lines = append(lines, fmt.Sprintf("- %s (%s): %s", sec.Path, sec.Title, sec.summary))
			}
		}
		if len(lines) > 0 {
			found += len(lines)
			fmt.Fprintf(&b, "\n## Summarized sections\n\nCall %s with their keys to see them in full: content goes to context files (resources %s<key>.md), and sections with tools add them to the tool list.\n\n%s\n",
				prompt.OpenSectionsName, ContextURIPrefix, strings.Join(lines, "\n"))
		}
	}
	if query != "" && found == 0 {
		return fmt.Sprintf("Nothing matches %q. Environments: %s. Call %s without a query for everything.", query, joinOr(s.names, "none"), HelpToolName)
	}
	return strings.TrimSpace(b.String())
}

// sectionKey is the key of an environment's section.
func sectionKey(name string) string {
	key, err := orchestrator.SectionKey(name)
	if err != nil {
		return name
	}
	return key
}

// summarizedSection is a section rendered as its summary.
type summarizedSection struct {
	prompt.SectionReport
	summary string
}

// summarized lists the visible sections the latest render summarized.
func (s *Server) summarized() []summarizedSection {
	if s.disc == nil {
		return nil
	}
	r := s.disc.Rendered(0)
	var out []summarizedSection
	for _, rep := range r.Report() {
		if !rep.Enabled || !rep.Visible || rep.Mode != visibility.Summary {
			continue
		}
		sec, ok := r.Prompt().Template().Section(rep.Path)
		if !ok {
			continue
		}
		out = append(out, summarizedSection{rep, sec.Summary()})
	}
	return out
}

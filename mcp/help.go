package mcp

import (
	"fmt"
	"maps"

	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// newHelpTool returns the help tool (tools.NewHelp): an overview of the
// environments (each one's summary, how to reach it and its help), the
// other tools, the resources and, with a prompt, the summarized sections;
// with a query, what matches it.
func (s *conn) newHelpTool() (*tools.Tool, error) {
	return tools.NewHelp(s.helpIndex)
}

// helpIndex describes what the server offers now.
func (s *conn) helpIndex() tools.HelpIndex {
	s.mu.Lock()
	offered := maps.Clone(s.offered)
	names, envTools := s.names, s.envTools
	s.mu.Unlock()
	idx := tools.HelpIndex{About: fmt.Sprintf("Environments: %s. Each is a tool of the same name: give it a command (and optionally a timeout in seconds); "+
		"it returns the output, whether the command succeeded and the environment's screen. "+
		"Screens are also resources: %s<name>, which a client can subscribe to.", joinOr(names, "none"), ScreenURIPrefix)}
	if s.disc != nil {
		idx.About += fmt.Sprintf(" Summarized sections open with %s: content goes to context files (resources %s<key>.md), and sections with tools add them to the tool list.",
			prompt.OpenSectionsName, ContextURIPrefix)
	}
	for _, name := range names {
		sum, _ := s.o.Summary(name)
		e := tools.HelpEntry{Name: name, Description: sum, Usage: "call the " + name + " tool with a command"}
		if _, ok := offered[name]; !ok {
			e.Usage = fmt.Sprintf("its tool is offered once its section is open: call %s with key %q", prompt.OpenSectionsName, sectionKey(name))
		}
		if scr, ok := s.o.Preview(name); ok {
			e.Help = Help(scr.Content)
		}
		idx.Environments = append(idx.Environments, e)
	}
	if s.disc != nil {
		for _, t := range s.disc.Tools() {
			if envTools[t.Name()] != t {
				idx.Tools = append(idx.Tools, tools.HelpEntry{Name: t.Name(), Description: t.Description()})
			}
		}
		idx.Sections = s.disc.HelpSections()
	}
	return idx
}

// sectionKey is the key of an environment's section.
func sectionKey(name string) string {
	key, err := orchestrator.SectionKey(name)
	if err != nil {
		return name
	}
	return key
}

package mcp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// takeEnvs reads the orchestrator's environments and their command tools
// into names and envTools, as of the orchestrator's generation. The caller
// holds mu, or is newConn.
func (s *conn) takeEnvs() error {
	names, envTools, gen, err := s.o.CommandTools()
	if err != nil {
		return err
	}
	for _, name := range names {
		if name == tools.HelpName || name == prompt.OpenSectionsName {
			return fmt.Errorf("environment %q has the name of one of the server's own tools (%s, %s); rename it", name, tools.HelpName, prompt.OpenSectionsName)
		}
	}
	s.names, s.envTools, s.gen = names, envTools, gen
	return nil
}

// followEnvs brings the session in line with the orchestrator's
// environments when they changed since it last looked (a spec file added,
// changed or removed, picked up here if no command did yet): the command
// tools, the screens' resources and, with a prompt, the environments'
// sections, which replace the old ones with the session's openings kept.
// The caller holds mu and brings the tool list in line afterwards, which
// tells clients (notifications/tools/list_changed). On an error nothing
// changed.
func (s *conn) followEnvs() error {
	s.o.ReloadSpecs()
	if s.o.Generation() == s.gen {
		return nil
	}
	names, envTools, gen := s.names, s.envTools, s.gen
	if err := s.takeEnvs(); err != nil {
		s.names, s.envTools, s.gen = names, envTools, gen
		return err
	}
	if s.disc != nil {
		p, err := s.composePrompt()
		if err == nil {
			err = s.disc.Replace(0, p)
		}
		if err != nil {
			s.names, s.envTools, s.gen = names, envTools, gen
			return err
		}
	}
	s.syncScreens()
	return nil
}

// syncScreens registers a screen resource per environment, and the
// orchestrator's own while spec files fail to load, removing those of
// environments that are gone and registering again those whose
// description changed. The caller holds mu, or is newConn.
func (s *conn) syncScreens() {
	want := make(map[string]string, len(s.names)+1)
	for _, name := range s.names {
		sum, _ := s.o.Summary(name)
		want[name] = "The screen of the " + name + " environment (" + sum + "): its state and how to use it, read live."
	}
	if len(s.o.LoadErrors()) > 0 {
		want[orchestrator.ScreenName] = "The screen of the orchestrator: spec files that did not load, and why."
	}
	var gone []string
	for uri := range s.screens {
		if _, ok := want[strings.TrimPrefix(uri, ScreenURIPrefix)]; !ok {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveResources(gone...)
		for _, uri := range gone {
			delete(s.screens, uri)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		uri, desc := ScreenURIPrefix+name, want[name]
		if s.screens[uri] == desc {
			continue
		}
		s.srv.AddResource(&sdk.Resource{
			URI:         uri,
			Name:        name + "-screen",
			Title:       name + " screen",
			Description: desc,
			MIMEType:    "text/plain",
		}, s.readScreen)
		s.screens[uri] = desc
	}
}

// envDescription is the description of an environment's tool: what it does,
// then the help its screen shows now.
func (s *conn) envDescription(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run a command in the %s environment", name)
	if sum, ok := s.o.Summary(name); ok && sum != "" {
		// A summary may end with state in parentheses ("Editor (2
		// views)"); a description leaves it out, so that it changes with
		// the help only.
		if i := strings.LastIndex(sum, " ("); i > 0 && strings.HasSuffix(sum, ")") {
			sum = sum[:i]
		}
		fmt.Fprintf(&b, " (%s)", sum)
	}
	b.WriteString(". The result is the command's output, whether it succeeded, and the environment's screen after it.")
	if scr, ok := s.o.Preview(name); ok {
		if h := Help(scr.Content); h != "" {
			b.WriteString("\n\n")
			b.WriteString(h)
		}
	}
	return b.String()
}

// Help returns the help part of an environment's screen: from a line that
// reads "Commands:" to the end (a declarative environment's command list,
// long for commands not used yet and short for used ones), or else the last
// paragraph (a shell's or a REPL's usage line). Screens show state first
// and how to use the environment last; the state is left out so that a tool
// description changes when the help does, not at every command. A screen
// the orchestrator cut (it ends with the note saying so) lost its help, and
// a last paragraph longer than maxHelpParagraph is state, not a usage line:
// for those Help returns "", so that no state (a viewed file's lines, say)
// becomes a tool's description.
func Help(screen string) string {
	screen = strings.TrimSpace(strings.ReplaceAll(screen, "\r\n", "\n"))
	if screen == "" {
		return ""
	}
	if strings.HasPrefix(screen, "Commands:\n") {
		return screen
	}
	if i := strings.Index(screen, "\nCommands:\n"); i >= 0 {
		return screen[i+1:]
	}
	if wasCut(screen) {
		return ""
	}
	if i := strings.LastIndex(screen, "\n\n"); i >= 0 {
		screen = strings.TrimSpace(screen[i+2:])
	}
	if len(screen) > maxHelpParagraph {
		return ""
	}
	return screen
}

// maxHelpParagraph bounds the last paragraph [Help] takes for help.
const maxHelpParagraph = 4 << 10

// wasCut reports whether screen ends with the line [orchestrator.Truncate]
// adds to a screen it cut.
func wasCut(screen string) bool {
	last := screen[strings.LastIndexByte(screen, '\n')+1:]
	return strings.HasPrefix(last, "[... ") && strings.HasSuffix(last, "]") &&
		(strings.Contains(last, " more lines cut: this screen shows at most ") || strings.Contains(last, " more bytes cut: this screen shows at most "))
}

// callEnv runs an environment's tool: the output and the screen as two text
// blocks (for clients that show text only) and as structured content.
func (s *conn) callEnv(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	s.mu.Lock()
	t := s.envTools[name]
	s.mu.Unlock()
	if t == nil {
		// Its spec file was removed while the call came in.
		return textResult(true, fmt.Sprintf("The environment %s is gone: its spec file was removed or no longer loads. List the tools again.", name)), nil
	}
	res, err := t.Call(ctx, s.toolContext(), req.Params.Arguments)
	if err != nil {
		return nil, err
	}
	defer s.refresh()
	out, ok := res.Value.(orchestrator.CommandOutput)
	if !ok {
		// The command did not run: its arguments were wrong.
		return textResult(true, res.Message), nil
	}
	output := out.Output
	if output == "" {
		output = "(no output)"
	}
	return &sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: output},
			&sdk.TextContent{Text: "Screen of " + name + " after the command:\n\n" + out.Screen},
		},
		StructuredContent: out,
		// A command still running has not failed.
		IsError: !out.Success && !out.Running,
	}, nil
}

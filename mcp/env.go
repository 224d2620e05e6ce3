package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/unfold-dev/unfold/orchestrator"
)

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
	if scr, ok := s.o.Screen(name); ok {
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
// description changes when the help does, not at every command.
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
	if i := strings.LastIndex(screen, "\n\n"); i >= 0 {
		return strings.TrimSpace(screen[i+2:])
	}
	return screen
}

// callEnv runs an environment's tool: the output and the screen as two text
// blocks (for clients that show text only) and as structured content.
func (s *conn) callEnv(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	res, err := s.envTools[name].Call(ctx, s.toolContext(), req.Params.Arguments)
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

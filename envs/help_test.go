package envs_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/golden"
)

// ok is a handler that succeeds with "ok".
func ok(context.Context, string) (string, error) { return "ok", nil }

// timerCommands are the help system's example timer commands (help system, "Custom
// Environments", option 2).
func timerCommands() []envs.Command {
	return []envs.Command{
		{Signature: "start", Description: "Start the timer from zero or resume after stop.", Example: "start", Handler: ok},
		{Signature: "stop", Description: "Stop the timer and record elapsed time.", Example: "stop", Handler: ok},
		{Signature: "reset", Description: "Reset timer to zero.", Example: "reset", Handler: ok},
	}
}

// editorCommands are the help system's example editor commands (help system, "Editor
// Environment"), with the short descriptions its screens show.
func editorCommands() []envs.Command {
	return []envs.Command{
		{
			Signature:   "view <file> /<start>/ /<end>/ [label]",
			Description: "View a section of a file using regex patterns to define boundaries.\nPatterns are Python regex. Multiple matches can be navigated with next_match/prev_match.",
			Summary:     "View file section by regex patterns",
			Example:     "view src/main.py /^def main/ /^if __name__/",
			Handler:     ok,
		},
		{
			Signature:   "edit <file> <start>-<end>",
			Description: "Replace lines with new content. Lines must be visible in a view.\nContent is provided on subsequent lines after the command.",
			Summary:     "Replace lines (must be visible in a view)",
			Example:     "edit src/main.py 45-50\ndef process(verbose=False):\n    if not verbose:\n        return",
			Handler:     ok,
		},
		{
			Signature:   `search "<pattern>" <glob>`,
			Description: "Find all occurrences of pattern in files matching glob.\nReturns filepath:line_number for each match.",
			Summary:     "Find text matching pattern in files",
			Example:     `search "TODO" *.py`,
			Handler:     ok,
		},
		{
			Signature:   "create <file>",
			Description: "Create a new file with initial content.\nContent is provided on subsequent lines after the command.",
			Example:     "create new_file.py\n# New module",
			Handler:     ok,
		},
		{Signature: "close <id>", Description: "Close a view", Handler: ok},
		{Signature: "next_match <id>", Description: "Show next pattern match for a view", Handler: ok},
		{Signature: "prev_match <id>", Description: "Show previous pattern match for a view", Handler: ok},
	}
}

const (
	noViews  = "Views:\n  (no views)"
	oneView  = "Views:\n  [1] src/main.py /^def main/ to /^if __name__/ (match 1/1)\n     45  def main():\n     46      parser = argparse.ArgumentParser()\n     ...\n     78  if __name__ == '__main__':"
	running  = "Timer: Running (5.23s)"
	stopped  = "Timer: Stopped (0.00s)"
	noState  = ""
	useState = "\x00" // marker: no State func, the description is the state
)

// checkGolden compares got with testdata/<name>, or rewrites it with
// UNFOLD_UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got)
}

func TestScreenGolden(t *testing.T) {
	tests := []struct {
		name     string
		env      string
		commands func() []envs.Command
		state    string
		used     []string // commands executed before the screen, in order
	}{
		// The first five reproduce the help system's example screens byte for byte.
		{"timer_unused", "timer", timerCommands, stopped, nil},
		{"timer_start", "timer", timerCommands, running, []string{"start"}},
		{"editor_unused", "editor", editorCommands, noViews, nil},
		{"editor_view", "editor", editorCommands, oneView, []string{"view src/main.py /^def main/ /^if __name__/"}},
		{"editor_view_edit_search", "editor", editorCommands, oneView, []string{"view a /x/ /y/", "edit a 1-2\nnew", `search "x" *.go`}},
		// A used command next to an always-short one: separate blocks.
		{"editor_create", "editor", editorCommands, noViews, []string{"create CONTRIBUTING.md\n# Contributing"}},
		// Used and always-short commands interleaved.
		{"editor_close_view_search", "editor", editorCommands, noViews, []string{"close 1", "view a /x/ /y/", `search "x" *.go`}},
		{"editor_all", "editor", editorCommands, noViews, []string{"view a /x/ /y/", "edit a 1-2", "search x y", "create b", "close 1", "next_match 1", "prev_match 1"}},
		{"timer_all", "timer", timerCommands, stopped, []string{"reset", "stop", "start", "start"}},
		{"timer_no_state", "timer", timerCommands, noState, []string{"stop"}},
		{"timer_default_state", "timer", timerCommands, useState, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := envs.DeclarativeSpec{Description: "Timer for tracking elapsed time", Commands: tt.commands()}
			if tt.state != useState {
				spec.State = func() string { return tt.state }
			}
			d, err := envs.NewDeclarative(tt.env, nil, spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.used {
				r, err := d.Execute(context.Background(), c)
				if err != nil || !r.Success {
					t.Fatalf("Execute(%q) = %+v, %v; want success", c, r, err)
				}
			}
			s, err := d.Screen()
			if err != nil {
				t.Fatal(err)
			}
			if s.MaxLines != envs.DefaultMaxLines {
				t.Errorf("got MaxLines %d, want %d", s.MaxLines, envs.DefaultMaxLines)
			}
			checkGolden(t, filepath.Join("screens", tt.name+".golden"), s.Content)
		})
	}
}

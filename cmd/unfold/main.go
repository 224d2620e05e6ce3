// Command unfold runs persistent environments for agents and renders
// prompts: `unfold serve` speaks the orchestrator's NDJSON protocol on stdin
// and stdout, `unfold repl` lets a person drive the same environments by
// hand, `unfold render` renders a prompt file, `unfold skills validate`
// checks Agent Skills folders, and `unfold version` says which build this
// is.
//
// Run `unfold --help` for the commands and `unfold help <command>` for one
// command's flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for `unfold --help`
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// adopts says that the command runs environments for a long time,
	// and so reaps the orphans they leave (see adoptOrphans).
	adopts bool
}

// commands lists the subcommands in the order `unfold --help` shows them.
func commands() []command {
	return []command{
		{"serve", "run the environments behind the NDJSON orchestrator protocol on stdin and stdout", runServe, true},
		{"repl", "drive the same environments by hand: type `env: command` and see the response and the screens", runRepl, true},
		{"agent", "run an agent on a task in a project (OpenAI-compatible, Responses or Anthropic API), showing each step and what it cost", runAgent, true},
		{"render", "render a prompt file to markdown, under a token budget if asked, or show where its tokens go", runRender, false},
		{"mcp", "serve the environments (and a prompt file) over the Model Context Protocol, on stdio or streamable HTTP", runMCP, true},
		{"skills", "check Agent Skills folders the way the format's reference validator does", runSkills, false},
		{"version", "print the version of this binary and the commit it was built from", runVersion, false},
		{"help", "show help for a command", runHelp, false},
	}
}

const overview = `unfold builds prompts that spend tokens only where they matter, and runs
persistent environments (shells, REPLs, editors, any program that speaks a
small protocol) for agents, showing each one's state as a screen after
every command.

Usage:
  unfold <command> [flags]

Commands:
`

func usage(w io.Writer) {
	fmt.Fprint(w, overview)
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun \"unfold help <command>\" or \"unfold <command> --help\" for a command's flags.\n")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "-version", "--version":
		return runVersion(args[1:], stdin, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if c.adopts {
				defer adoptOrphans(c.name, stderr)()
			}
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "unfold: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func runHelp(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0, len(args) == 1 && slices.Contains([]string{"-h", "-help", "--help", "help"}, args[0]):
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "help" {
			return c.run([]string{"--help"}, strings.NewReader(""), stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "unfold help: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// parseFlags parses a subcommand's flags. It returns the exit status to stop
// with, or -1 to go on: 0 after --help (printed to stdout), 2 after a bad
// flag or stray arguments.
func parseFlags(fs *flag.FlagSet, help string, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, help)
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold %s: %v\n\n", fs.Name(), err)
		printUsage(stderr)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unfold %s: unexpected arguments %q\n\n", fs.Name(), fs.Args())
		printUsage(stderr)
		return 2
	}
	return -1
}

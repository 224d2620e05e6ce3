package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/unfold-dev/unfold/orchestrator"
)

const serveHelp = `Usage: unfold serve [--project DIR]

Runs the orchestrator. It loads the built-in environments and the spec files
in DIR/env/*.json (a bad file is skipped with a message on stderr and on the
"orchestrator" screen), then reads one JSON command per line on stdin and
writes one JSON response per line on stdout:

  in:  {"type":"command","environment":"bash","command":"ls -la"}
  out: {"type":"response","response":{"output":"...","success":true},"screen":{"bash":{"content":"...","max_lines":50}}}

A command may add "timeout" (seconds after which control comes back while it
runs on; with "hard": true it is interrupted then), "quiet" (seconds without
new output after which control comes back), "budget" (tokens of output) and
"id" (then it runs alongside commands to other environments, and its response,
which carries the id, comes as soon as it is ready). A response marked
"running": true is continued by the next command to its environment: "" waits,
"C-c" interrupts, other text is typed to it when it waits for input. A line
the server cannot use is answered with {"type":"error","message":"..."} and
serving goes on. At the end of input the commands that run are interrupted
and those that wait are answered as not run, then every environment is shut
down and the exit status is 0 (keep the input open until the answers you
need arrived, or give --batch to run them all: a command piped in with echo
needs it, as its input ends at once). SIGINT or SIGTERM interrupt and shut down too, within 5
seconds, with status 130 or 143. The
protocol is described in docs/serve-protocol.md.
`

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	project := fs.String("project", ".", "the project `DIR`: environments work there, and spec files come from DIR/env/*.json")
	names := fs.String("builtins", "all", builtinsUsage())
	maxLine := fs.Int("max-line-bytes", orchestrator.DefaultMaxLineBytes, "the longest input line accepted, in `bytes`")
	outputBudget := fs.Int("output-budget", orchestrator.DefaultOutputBudget, budgetUsage)
	batch := fs.Bool("batch", false, "at the end of input, run the commands already read to their end before shutting down (a file of commands), instead of interrupting them")
	if code := parseFlags(fs, serveHelp, args, stdout, stderr); code >= 0 {
		return code
	}
	if err := checkBudget(*outputBudget); err != nil {
		fmt.Fprintf(stderr, "unfold serve: %v\n", err)
		return 2
	}
	if _, err := projectDir(*project); err != nil {
		fmt.Fprintf(stderr, "unfold serve: %v\n", err)
		return 2
	}
	stop := stopOnSignal("serve", stderr)
	defer stop.stop()
	survivePipe()
	o, err := newOrchestrator(*project, *maxLine, *names, stderr, orchestrator.WithOutputBudget(*outputBudget))
	if err != nil {
		fmt.Fprintf(stderr, "unfold serve: %v\n", err)
		return 1
	}
	var sopts []orchestrator.ServeOption
	if *batch {
		sopts = append(sopts, orchestrator.WithBatch())
	}
	err = o.Serve(stop.ctx, stdin, stdout, sopts...)
	switch {
	case err == nil:
		return 0
	case stop.signal() != nil && errors.Is(err, stop.ctx.Err()):
		fmt.Fprintf(stderr, "unfold serve: stopped by %s; the environments were shut down\n", stop.name())
		if err != stop.ctx.Err() {
			// Some environment also failed to shut down.
			fmt.Fprintf(stderr, "unfold serve: %v\n", err)
		}
		return stop.code()
	case errors.Is(err, orchestrator.ErrShutdown):
		// The protocol ended normally; the failures are diagnostics.
		fmt.Fprintf(stderr, "unfold serve: %v\n", err)
		return 0
	default:
		fmt.Fprintf(stderr, "unfold serve: %v\n", err)
		return 1
	}
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
	"github.com/unfold-dev/unfold/orchestrator"
)

const replHelp = `Usage: unfold repl [--project DIR] [--history FILE]

Drives the environments "unfold serve" would offer (the built-in ones and the
spec files in DIR/env/*.json), by hand. Type a command for one environment on
one line:

  counter: add 5

or several lines as a fenced block named after the environment:

  ` + "```counter" + `
  add 1
  add 2
  ` + "```" + `

Each command prints the environment's response, then every screen, as the
agent would see them. A command that runs on after 30 seconds without new
output (or 2 minutes in all) gives the prompt back: type ` + "`env:`" + ` to wait for
more of its output, ` + "`env: C-c`" + ` to interrupt it, or ` + "`env: text`" + ` to answer it
when it waits for input. On a terminal, lines can be edited (arrows, Ctrl-A,
Ctrl-E, Ctrl-W, ...) and earlier ones recalled with the up arrow or Ctrl-R.
Ctrl-C interrupts a running command, or drops the line being typed; :screens
shows the screens again, :help shows this help, :quit (or Ctrl-D, or the end
of input) shuts every environment down.
`

// maxReplInput bounds one line, and one fenced block, typed at the REPL.
const maxReplInput = 16 << 20

func runRepl(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("repl", flag.ContinueOnError)
	project := fs.String("project", ".", "the project `DIR`: environments work there, and spec files come from DIR/env/*.json")
	names := fs.String("builtins", "all", builtinsUsage())
	history := fs.String("history", "", "keep the lines typed on a terminal in `FILE`, read back at the next start (default: only for this session)")
	if code := parseFlags(fs, replHelp, args, stdout, stderr); code >= 0 {
		return code
	}
	if _, err := projectDir(*project); err != nil {
		fmt.Fprintf(stderr, "unfold repl: %v\n", err)
		return 2
	}
	// A reader that went away (unfold repl | head) ends the session at the
	// next write, and the environments shut down, the programs they
	// started with them.
	survivePipe()
	o, err := newOrchestrator(*project, orchestrator.DefaultMaxLineBytes, *names, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "unfold repl: %v\n", err)
		return 1
	}
	out := &outWriter{w: stdout}
	lines := newLineReader(stdin, stdout, *history, stderr)
	if p, ok := lines.(*plainReader); ok {
		p.out = out
	}
	r := &repl{o: o, out: out}
	stopSignals := r.catchInterrupts()
	err = r.run(context.Background(), lines)
	stopSignals()
	if cerr := lines.Close(); cerr != nil {
		fmt.Fprintf(stderr, "unfold repl: %v\n", cerr)
	}
	if cerr := o.Close(); cerr != nil {
		fmt.Fprintf(stderr, "unfold repl: %v\n", cerr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold repl: %v\n", err)
		return 1
	}
	return 0
}

// outWriter passes writes on and remembers the first that failed: the
// REPL's output was closed.
type outWriter struct {
	w io.Writer

	// mu guards err; the REPL writes from its loop and from its handler
	// of Ctrl-C.
	mu  sync.Mutex
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// failed returns the first write error, or nil.
func (o *outWriter) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// repl reads commands and prints responses and screens.
type repl struct {
	o   *orchestrator.Orchestrator
	out *outWriter

	// mu guards cancel, the running command's cancel function.
	mu     sync.Mutex
	cancel context.CancelFunc
}

// catchInterrupts makes Ctrl-C cancel the running command instead of ending
// the program. It returns a function that stops catching.
func (r *repl) catchInterrupts() func() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sigs:
				r.mu.Lock()
				if r.cancel != nil {
					r.cancel()
				} else {
					fmt.Fprint(r.out, "\n(type :quit to leave)\n")
				}
				r.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

func (r *repl) run(ctx context.Context, lines lineReader) error {
	fmt.Fprintf(r.out, "unfold repl: environments %s. Type `env: command`, a fenced block, or :help.\n", strings.Join(r.o.Names(), ", "))
	var p replParser
	for {
		prompt := "unfold> "
		if p.inFence() {
			prompt = "... "
		}
		if err := r.out.failed(); err != nil {
			// Nobody reads the responses any more.
			return fmt.Errorf("output: %w", err)
		}
		line, err := lines.ReadLine(prompt)
		switch {
		case errors.Is(err, errLineTooLong):
			fmt.Fprintf(r.out, "error: the line is longer than %d bytes; it was skipped\n", maxReplInput)
			continue
		case errors.Is(err, errInterrupted):
			if p.inFence() {
				p = replParser{}
				fmt.Fprint(r.out, "(the fenced block was dropped)\n")
			} else {
				fmt.Fprint(r.out, "(type :quit to leave)\n")
			}
			continue
		case err == io.EOF:
			if p.inFence() {
				fmt.Fprint(r.out, "error: the input ended inside a fenced block; it was not run\n")
			}
			return nil
		case err != nil:
			return err
		}
		a := p.feed(line)
		switch a.kind {
		case actionNone:
		case actionMessage:
			fmt.Fprintln(r.out, a.text)
		case actionQuit:
			return nil
		case actionHelp:
			fmt.Fprint(r.out, replHelp)
		case actionScreens:
			r.printScreens(r.o.Screens())
		case actionRun:
			r.execute(ctx, a.env, a.text)
		}
	}
}

func (r *repl) execute(ctx context.Context, env, command string) {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	res := r.o.Execute(ctx, env, command)
	r.mu.Lock()
	r.cancel = nil
	r.mu.Unlock()
	cancel()
	status := "ok"
	switch {
	case res.Response.Running:
		status = "still running (send `" + env + ":` to wait, `" + env + ": C-c` to interrupt)"
	case !res.Response.Success:
		status = "failed"
	}
	// What an environment says goes to the user's terminal as plain text:
	// an escape sequence in it must not write the clipboard, clear the
	// screen or hide text.
	fmt.Fprintf(r.out, "--- %s: %s ---\n%s\n", env, status, strings.TrimRight(term.Plain(res.Response.Output), "\n"))
	r.printScreens(res.Screens)
}

func (r *repl) printScreens(screens map[string]envs.Screen) {
	for _, n := range slices.Sorted(maps.Keys(screens)) {
		fmt.Fprintf(r.out, "=== screen %s ===\n%s\n", n, strings.TrimRight(term.Plain(screens[n].Content), "\n"))
	}
}

// actionKind is what a line of input asks for.
type actionKind int

const (
	actionNone    actionKind = iota // nothing yet (inside a fence, or a blank line)
	actionRun                       // run text in env
	actionMessage                   // print text
	actionHelp
	actionScreens
	actionQuit
)

type action struct {
	kind actionKind
	env  string
	text string
}

// replParser turns lines into actions: `env: command` lines, fenced blocks
// named after an environment, and :meta commands.
type replParser struct {
	fenceEnv string   // the environment of the open fence, "" outside one
	fence    string   // the opening fence's backticks
	lines    []string // the fenced block so far
	size     int      // bytes in lines
}

func (p *replParser) inFence() bool { return p.fence != "" }

func (p *replParser) feed(line string) action {
	if p.inFence() {
		if strings.TrimSpace(line) == p.fence {
			a := action{kind: actionRun, env: p.fenceEnv, text: strings.Join(p.lines, "\n")}
			*p = replParser{}
			return a
		}
		p.size += len(line) + 1
		if p.size > maxReplInput {
			*p = replParser{}
			return action{kind: actionMessage, text: fmt.Sprintf("error: the fenced block is longer than %d bytes; it was dropped", maxReplInput)}
		}
		p.lines = append(p.lines, line)
		return action{}
	}
	trimmed := strings.TrimSpace(line)
	switch {
	case trimmed == "":
		return action{}
	case strings.HasPrefix(trimmed, "```"):
		fence := trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		env := strings.TrimSpace(trimmed[len(fence):])
		if env == "" {
			return action{kind: actionMessage, text: "error: name the environment after the fence, like ```bash"}
		}
		p.fence, p.fenceEnv = fence, env
		return action{}
	case strings.HasPrefix(trimmed, ":"):
		switch trimmed {
		case ":quit", ":q", ":exit":
			return action{kind: actionQuit}
		case ":help", ":h":
			return action{kind: actionHelp}
		case ":screens", ":s":
			return action{kind: actionScreens}
		}
		return action{kind: actionMessage, text: fmt.Sprintf("error: unknown %s; use :help, :screens or :quit", trimmed)}
	}
	env, command, ok := strings.Cut(line, ":")
	env = strings.TrimSpace(env)
	if !ok || env == "" || strings.ContainsAny(env, " \t") {
		return action{kind: actionMessage, text: "error: type `env: command` (like `counter: add 5`), a fenced block starting with ```env, or :help"}
	}
	return action{kind: actionRun, env: env, text: strings.TrimSpace(command)}
}

package interactive

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// start starts the program and waits for its first prompt, then sends the
// init commands.
func (e *Env) start() (*proc, error) {
	if e.spec.StartCheck != nil {
		if err := e.spec.StartCheck(); err != nil {
			return nil, err
		}
	}
	p, err := startProc(e.args, e.spec.Dir, term.Environ(nil, e.spec.Env), e.prompt, e.cont, e.lead, e.spec.Resources)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.spec.StartTimeout)
	defer cancel()
	fail := func(what string) (*proc, error) {
		_ = p.stop()
		return nil, errors.New(what)
	}
	if _, o := p.wait(ctx); o != done {
		return fail(fmt.Sprintf("no prompt matching %q within %v (%s)", e.spec.Prompt, e.spec.StartTimeout, describe(o, p)))
	}
	for _, c := range e.spec.Init {
		if _, o := p.send(ctx, c, envs.Limits{Quiet: -1}, 0); o != done {
			return fail(fmt.Sprintf("init command %q: %s", c, describe(o, p)))
		}
	}
	// The output of commands from now on keeps its whole past the limit
	// (the init commands' is dropped).
	p.spool = e.spool
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		_ = p.stop()
		return nil, envs.ErrClosed
	}
	e.p = p
	e.started++
	return p, nil
}

func describe(o result, p *proc) string {
	switch o {
	case exited:
		return "the program " + p.status
	case done:
		return "done"
	default:
		return "no prompt"
	}
}

// cleanOutput removes from out the prompts printed between the lines of a
// multi-line command (at most one per line sent, at line starts) and the
// program's echo of the command: when the first line is the echo of the
// first line sent, each line sent, in order, is dropped where it appears as
// a line of its own. A program that does not echo keeps all its output,
// lines that happen to look like the input included.
func cleanOutput(out, command string, lead *regexp.Regexp) string {
	if command == "" {
		return out
	}
	sent := strings.Split(strings.TrimRight(command, "\n"), "\n")
	lines := strings.Split(out, "\n")
	budget := len(sent)
	for i, line := range lines {
		for budget > 0 {
			loc := lead.FindStringIndex(line)
			if loc == nil || loc[1] == 0 {
				break
			}
			line = line[loc[1]:]
			budget--
		}
		lines[i] = line
	}
	trim := func(s string) string { return strings.TrimRight(s, " \t\r") }
	if len(lines) == 0 || trim(lines[0]) != trim(sent[0]) || trim(sent[0]) == "" {
		return strings.Join(lines, "\n")
	}
	kept := lines[:0]
	j := 0
	for _, line := range lines {
		if j < len(sent) && trim(line) == trim(sent[j]) {
			j++
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

package bash

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// keepKey marks a context from [AnswerLater].
type keepKey struct{}

// AnswerLater returns a context under which a command that stops to wait
// for input is left waiting instead of interrupted: Execute returns at once
// with the question, and the text of the next command is typed to the
// waiting program as its answer (a line each).
func AnswerLater(ctx context.Context) context.Context {
	return context.WithValue(ctx, keepKey{}, true)
}

// outcome is how a command ended.
type outcome struct {
	fr             *frame // the marker, when the shell finished the command
	note           string // what happened besides the output, for the response
	waiting        string // the question, when the command was left waiting
	died           bool   // the shell ended
	bare           bool   // the shell is back at its prompt without a marker: the command changed PS1
	shellSignalled bool   // the interrupt went to the shell itself, which may have prompted again
}

// Execute runs command (any bash text, several lines included) and returns
// its output (stdout and stderr together, without escape sequences, at most
// the output limit) and whether it exited with status 0.
//
// When ctx is done or the timeout passes, the command is interrupted: Ctrl-C,
// then SIGTERM and SIGKILL to its process group if it ignores that; the
// shell and its state stay. A command that waits for input is interrupted
// as soon as it waits (unless ctx comes from [AnswerLater]) and the response
// quotes the question. If the shell itself ended, the next command starts a
// new one in the last working directory and says what was lost. Execute
// returns an error only when the shell is closed or cannot be started.
func (s *Shell) Execute(ctx context.Context, command string) (envs.Response, error) {
	s.run.Lock()
	defer s.run.Unlock()
	s.mu.Lock()
	closed, p, answering := s.closed, s.p, s.waiting != ""
	s.mu.Unlock()
	if closed {
		return envs.Response{}, fmt.Errorf("bash: execute: %w", envs.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return envs.Response{Output: fmt.Sprintf("[Not run: %s before it started.]", stopWord(err))}, nil
	}
	var parts []string
	p.settle()
	if !p.alive() {
		np, note, err := s.restart(p)
		if err != nil {
			return envs.Response{}, fmt.Errorf("bash: execute: %w", err)
		}
		p, answering = np, false
		parts = append(parts, note)
	}
	p.claim()
	defer p.release()
	// Blank lines alone are no news (the shell writes one when a Ctrl-C
	// meets its prompt).
	if bg := strings.Trim(p.stream.background(), "\n"); bg != "" {
		parts = append(parts, "[Output since the last command (background jobs):]\n"+bg)
	}
	// The default timeout is kept here rather than in a derived context,
	// which would cost a timer and a goroutine wake-up on every command.
	var timeout time.Duration
	if _, ok := ctx.Deadline(); !ok && s.timeout > 0 {
		timeout = s.timeout
	}
	if ctx.Done() != nil {
		stopKick := context.AfterFunc(ctx, p.kick)
		defer stopKick()
	}
	out := envs.NewOutput(s.limit)
	var o outcome
	if answering {
		s.mu.Lock()
		s.waiting = ""
		s.mu.Unlock()
		p.stream.Redirect(out)
		text := command
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if _, err := p.master.Write([]byte(text)); err != nil {
			o = s.died(p)
		}
	} else if err := s.submit(p, command, out); err != nil {
		o = s.died(p)
	}
	if o.note == "" {
		o = s.await(ctx, p, time.Now(), timeout)
	}
	var cut, cutAfter, extra string
	if o.bare || o.fr != nil && o.fr.psLen != p.psLen {
		o, cut, cutAfter, extra = s.restorePrompt(ctx, p, o, out)
	}
	if o.fr != nil {
		p.number = o.fr.number
		if o.fr.override || o.fr.jobCount > 0 && !o.fr.listed {
			s.fix(p, o.fr, out)
		}
	}
	if o.waiting == "" {
		p.stream.finish()
	}
	copies := 1
	if o.shellSignalled {
		copies = 3
	}
	text := cutPrompt(out.String(), cut, copies) + extra
	if text = strings.TrimRight(text, "\n"); text != "" {
		parts = append(parts, text)
	}
	if cutAfter != "" {
		// The changed prompt's end came after the marker, as output
		// between commands.
		bg := p.stream.background()
		if promptAt(bg, 0, cutAfter) {
			bg = bg[len(cutAfter):]
		}
		if bg = strings.Trim(bg, "\n"); bg != "" {
			parts = append(parts, "[Output since the last command (background jobs):]\n"+bg)
		}
	}
	if o.note != "" {
		parts = append(parts, o.note)
	}
	resp := envs.Response{Output: strings.Join(parts, "\n")}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case o.fr != nil:
		s.cwd, s.lastExit, s.jobs = o.fr.cwd, o.fr.status, o.fr.jobs
		resp.Success = o.fr.status == 0 && o.note == ""
	case o.waiting != "":
		s.waiting = o.waiting
	case o.died:
		s.jobs = nil
	}
	return resp, nil
}

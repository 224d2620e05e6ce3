package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// running is an execute request whose reply has not come yet, kept
// across calls once a call gave control back.
type running struct {
	child   *child
	command string
	began   time.Time
	out     *envs.Output // output sent since the last response (and the reply's, at the end)
	f       *term.Filter // makes the output plain text on its way to out, as a terminal's is
	waiting bool         // the process asked for a line of input
	prompt  string
	hidden  bool
	stop    string    // why it was interrupted, in lower case; "" when it was not
	killAt  time.Time // when an interrupted command that has not answered is killed
}

// Execute runs command with the environment's own limits; see
// [Process.ExecuteLimited].
func (p *Process) Execute(ctx context.Context, command string) (envs.Response, error) {
	return p.ExecuteLimited(ctx, command, envs.Limits{})
}

// ExecuteLimited sends the command to the process and returns its reply,
// with the output it sent meanwhile ({"type":"output"} lines) before it,
// cut to the token budget. Control comes back before the reply at the
// soft limits, and as soon as the process asks for input
// ({"type":"input"}); the response then has Running set, and the next
// command continues it as [envs.LimitedExecutor] says: text is sent to
// the process as an input request, and [envs.Interrupt] sends it SIGINT.
// After Close it returns an error wrapping [envs.ErrClosed].
func (p *Process) ExecuteLimited(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	now := time.Now()
	limits = limits.Or(envs.Defaults{Quiet: p.spec.Quiet, Wait: p.spec.Timeout, Budget: p.spec.Budget}, now)
	if p.spec.Hard {
		var cancel context.CancelFunc
		ctx, limits, cancel = limits.Ceiling(ctx, now, p.spec.Timeout, nil)
		defer cancel()
	}
	if limits.Save == nil {
		limits.Save = p.spec.Save
	}
	if ctx.Err() != nil {
		return envs.NotRun(ctx.Err()), nil
	}
	if err := p.turn.Wait(ctx, limits.Until); err != nil {
		return envs.NotRun(err), nil
	}
	defer p.turn.Done()
	p.run.Lock()
	defer p.run.Unlock()
	resp, err := p.execute(ctx, command, limits)
	return p.spool.Fit(limits, resp), err
}

func (p *Process) execute(ctx context.Context, command string, limits envs.Limits) (envs.Response, error) {
	p.mu.Lock()
	r := p.running
	p.mu.Unlock()
	key := envs.IsInterrupt(command) || envs.IsEndOfInput(command)
	c, note, err := p.ensure()
	if errors.Is(err, envs.ErrClosed) {
		return envs.Response{}, fmt.Errorf("orchestrator: execute %s: %w", p.spec.Name, err)
	}
	if r != nil && r.child != c {
		// The command ended with the process that ran it.
		p.setRunning(nil)
		if command != "" && !key {
			note += "[The text was not sent: the command it was meant for ended with the process. Send it again to run it as a command.]\n"
		}
		return envs.Response{Output: strings.TrimSuffix(note, "\n")}, err
	}
	if err != nil {
		return envs.Response{Output: note + err.Error(), Success: false}, nil
	}
	switch {
	case r == nil && key:
		return envs.Response{Output: note + envs.IdleNote(strings.TrimSpace(command)), Success: true}, nil
	case r == nil:
		req := request{Type: "execute", Command: command}
		if err := c.ask(req); err != nil {
			p.kill(c, "it broke the protocol")
			return envs.Response{}, fmt.Errorf("%s%w. This command was not sent to it: send it again", note, err)
		}
		r = &running{child: c, command: command, began: time.Now()}
		r.reset(p.spool.Output(p.spec.OutputLimit))
		p.setRunning(r)
		if err := p.sendRunning(ctx, r, req); err != nil {
			return envs.Response{}, fmt.Errorf("%s%w", note, err)
		}
	case command == "":
	case envs.IsInterrupt(command):
		p.interruptRunning(r, "interrupted ("+envs.Interrupt+")")
	case !r.waiting:
		resp := p.partial(r, note, envs.NotReadingNote())
		return resp, nil
	default:
		in := request{Type: "input", Text: &command}
		if envs.IsEndOfInput(command) {
			in = request{Type: "input", EOF: true}
		}
		r.waiting, r.prompt, r.hidden = false, "", false
		if err := p.sendRunning(ctx, r, in); err != nil {
			return envs.Response{}, fmt.Errorf("%s%w", note, err)
		}
	}
	return p.await(ctx, r, limits, note)
}

func (p *Process) setRunning(r *running) {
	p.mu.Lock()
	p.running = r
	p.mu.Unlock()
}

// sendRunning sends req for r's command. When ctx ends first, the command
// is interrupted and the send gets the grace period to finish; a send
// that fails or does not finish stops the process.
func (p *Process) sendRunning(ctx context.Context, r *running, req request) error {
	sent := make(chan error, 1)
	go func() { sent <- r.child.send(req) }()
	var err error
	select {
	case err = <-sent:
	case <-ctx.Done():
		p.interruptRunning(r, interruptReason(ctx))
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case err = <-sent:
		case <-t.C:
			err = errors.New("the process did not read it")
		}
	}
	if err == nil {
		return nil
	}
	reason := p.waitReason(r.child)
	p.kill(r.child, reason)
	p.setRunning(nil)
	return fmt.Errorf("cannot send the request to the process (%s); it restarts on the next command%s", reason, r.child.stderrNote())
}

// interruptRunning sends SIGINT for r's command, which gets the grace
// period to answer before the process is killed.
func (p *Process) interruptRunning(r *running, why string) {
	if r.stop != "" {
		return
	}
	r.stop, r.killAt = why, time.Now().Add(p.grace)
	r.child.interrupt()
}

// await reads what the process sends for r's command until its reply, a
// request for input, a soft limit, or ctx's end (which interrupts the
// command, as the end of the grace period then kills the process).
func (p *Process) await(ctx context.Context, r *running, limits envs.Limits, note string) (envs.Response, error) {
	c := r.child
	changed := time.Now()
	done, exited := ctx.Done(), c.exited
	var gone <-chan time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var next time.Time
		if r.stop != "" {
			if !time.Now().Before(r.killAt) {
				p.kill(c, "it did not answer an interrupt")
				p.setRunning(nil)
				return envs.Response{Output: note + r.output() + fmt.Sprintf("%s, and %s did not answer the interrupt within %v, so the process was stopped. It restarts on the next command; its state was lost.", capitalize(r.stop), p.spec.Name, p.grace)}, nil
			}
			next = r.killAt
		} else {
			var why string
			if why, next = limits.Due(time.Now(), changed); why != "" {
				return p.partial(r, note, envs.RunningNote(why)), nil
			}
		}
		var wake <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next))
			wake = timer.C
		}
		select {
		case m, ok := <-c.lines:
			if !ok {
				reason := p.waitReason(c)
				p.kill(c, reason)
				p.setRunning(nil)
				return envs.Response{}, fmt.Errorf("%s%sthe process stopped before answering (%s); it restarts on the next command, and its state was lost%s", note, r.output(), reason, c.stderrNote())
			}
			if m.tooLong > 0 {
				p.setRunning(nil)
				return envs.Response{}, fmt.Errorf("%sthe process sent a reply of %d bytes, more than the limit of %d; the reply was discarded", note, m.tooLong, p.maxLine)
			}
			if !m.valid {
				p.kill(c, "it broke the protocol")
				p.setRunning(nil)
				return envs.Response{}, fmt.Errorf("%sthe process wrote a line that is not a protocol reply: %q (write logs to stderr, not stdout). The process was stopped and restarts on the next command", note, clip(string(m.data)))
			}
			rep := m.rep
			switch rep.Type {
			case "output":
				if rep.Output != nil {
					_, _ = r.f.Write([]byte(*rep.Output))
					changed = time.Now()
				}
				continue
			case "input":
				r.waiting = true
				r.prompt = envs.ClipQuestion(strings.TrimSpace(cmp.Or(term.Plain(derefString(rep.Prompt)), envs.LastLine(r.output()))))
				if r.prompt == "" {
					r.prompt = "(no prompt text)"
				}
				r.hidden = rep.Hidden != nil && *rep.Hidden || envs.SecretPrompt(r.prompt)
				return p.partial(r, note, envs.WaitingNote(r.prompt, r.hidden)), nil
			}
			p.setRunning(nil)
			return p.finish(ctx, r, rep, note)
		case <-exited:
			// Lines sent before the end are still to be read; a process
			// it started may keep its output open, though.
			exited, gone = nil, time.After(stderrLinger)
		case <-gone:
			reason := c.exitReason()
			p.kill(c, reason)
			p.setRunning(nil)
			return envs.Response{}, fmt.Errorf("%s%sthe process stopped before answering (%s); it restarts on the next command, and its state was lost%s", note, r.output(), reason, c.stderrNote())
		case <-done:
			done = nil
			p.interruptRunning(r, interruptReason(ctx))
		case <-wake:
		}
	}
}

// finish turns the reply that ended r's command into the response.
func (p *Process) finish(ctx context.Context, r *running, rep reply, note string) (envs.Response, error) {
	if rep.Type == "error" {
		return envs.Response{}, fmt.Errorf("%sthe process answered with an error: %s", note, term.Plain(*rep.Message))
	}
	if rep.Type != "response" || rep.Output == nil || rep.Success == nil {
		p.kill(r.child, "it broke the protocol")
		return envs.Response{}, fmt.Errorf("%sthe process answered an execute request with %s; want {\"type\":\"response\",\"output\":\"...\",\"success\":true}. The process was stopped and restarts on the next command", note, describeReply(rep))
	}
	// The reply's output goes through the command's output too, so that
	// it is bounded, and kept whole, alike.
	_, _ = r.f.Write([]byte(*rep.Output))
	resp := envs.Response{Output: note + r.output(), Success: *rep.Success}
	if r.stop != "" {
		resp.Output += "\n[" + r.stop + "; the process answered the interrupt]"
		resp.Success = false
	}
	return resp, nil
}

// partial answers for a command that runs on: the output it sent since
// the last response, and note.
func (p *Process) partial(r *running, note, what string) envs.Response {
	text := r.output()
	r.reset(p.spool.Output(p.spec.OutputLimit))
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return envs.Response{Output: note + text + what, Running: true, Waiting: r.waiting, Prompt: r.prompt, Hidden: r.hidden}
}

// output returns the output r's command sent since the last response.
func (r *running) output() string {
	_ = r.f.Flush()
	return r.out.String()
}

// reset makes out where r's output goes from now on.
func (r *running) reset(out *envs.Output) {
	r.out, r.f = out, term.NewFilter(out)
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

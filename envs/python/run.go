package python

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// cell is a block of code the interpreter runs. It may outlive the call
// that started it (see [REPL.ExecuteLimited]).
type cell struct {
	id      string // ties the driver's replies to this cell
	code    string
	began   time.Time
	waiting bool   // it waits for a line of input
	prompt  string // what it asked, while waiting
	hidden  bool   // it asked for a secret, while waiting
	stop    string // why it is being interrupted ("Timed out", "Cancelled", ...); "" when it is not
	stopAt  time.Duration
	killAt  time.Time // when an interrupted cell that has not stopped is killed
}

// outcome is what happened to a cell during one call.
type outcome struct {
	output  string
	reply   reply
	replied bool   // the cell ended; reply is its result
	running string // the cell runs on: the note saying why control came back
	// killed: the code did not stop within the grace period.
	killed bool
	// died says how the interpreter ended when it did during the call
	// (or broke the protocol); "" when it lives.
	died string
}

// background returns what the interpreter wrote since the last command
// (background threads, processes it started), or "".
func (p *proc) background() string {
	if sk := p.out.between(); sk != nil {
		return sk.String()
	}
	return ""
}

// begin sends code to the driver as a new cell.
func (p *proc) begin(ctx context.Context, code string) (*cell, error) {
	c := &cell{id: rand.Text(), code: code, began: time.Now()}
	line, _ := json.Marshal(request{ID: c.id, Code: &code})
	if err := p.send(ctx, append(line, '\n')); err != nil {
		// A partly written request leaves the protocol unusable.
		p.kill()
		return c, err
	}
	return c, nil
}

// answer sends the waiting cell c a line of input, or end of input when
// text is nil.
func (p *proc) answer(ctx context.Context, c *cell, text *string) error {
	line, _ := json.Marshal(request{ID: c.id, Input: text, EOF: text == nil})
	c.waiting, c.prompt, c.hidden = false, "", false
	if err := p.send(ctx, append(line, '\n')); err != nil {
		p.kill()
		return err
	}
	return nil
}

// interrupt raises KeyboardInterrupt in c (SIGINT to the interpreter's
// process group, as Ctrl-C would); c gets grace to stop before the
// interpreter is killed. why says what interrupted it.
func (p *proc) interrupt(c *cell, why string, grace time.Duration) {
	if c.stop != "" {
		return
	}
	c.stop, c.stopAt, c.killAt = why, time.Since(c.began), time.Now().Add(grace)
	signalGroup(p.cmd, sigInterrupt)
}

// wait waits for c's reply, its request for input, a soft limit, ctx's end
// (which interrupts c), or, once c is interrupted, the end of its grace
// (which kills the interpreter); then it collects the output so far.
func (p *proc) wait(ctx context.Context, c *cell, limits envs.Limits, grace time.Duration) outcome {
	var o outcome
	o.wait(ctx, p, c, limits, grace)
	next := backgroundLimit // what comes after the cell's end
	if o.running != "" {
		next = p.out.limit // the cell runs on
	}
	sk, _ := p.out.sync(next, o.running != "")
	o.output = sk.String()
	return o
}

func (o *outcome) wait(ctx context.Context, p *proc, c *cell, limits envs.Limits, grace time.Duration) {
	changed := time.Now()
	done := ctx.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		var next time.Time
		if c.stop != "" {
			if !now.Before(c.killAt) {
				p.kill()
				o.killed = true
				return
			}
			next = c.killAt
		} else {
			var why string
			if why, next = limits.Due(now, changed); why != "" {
				o.running = envs.RunningNote(why)
				return
			}
		}
		var wake <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next))
			wake = timer.C
		}
		select {
		case rep, ok := <-p.replies:
			o.take(p, c, rep, ok)
			return
		case <-p.exited:
			// A reply may have raced the exit.
			select {
			case rep, ok := <-p.replies:
				if ok && rep.Status != "protocol" && rep.Status != "input" && rep.ID != nil && *rep.ID == c.id {
					o.reply, o.replied = rep, true
				}
			default:
			}
			if !o.replied {
				o.died = exitDescription(p.waitErr)
			}
			return
		case <-p.out.changed:
			changed = time.Now()
		case <-done:
			select {
			case rep, ok := <-p.replies:
				// The code finished as the context ended: no interrupt.
				o.take(p, c, rep, ok)
				return
			default:
			}
			done = nil
			p.interrupt(c, stopWord(ctx), grace)
		case <-wake:
		}
	}
}

// take handles a reply to c (ok false: the reply stream ended): its
// result, its request for input, or a breach of the protocol, which ends
// the interpreter.
func (o *outcome) take(p *proc, c *cell, rep reply, ok bool) {
	switch {
	case !ok && p.waitExit(stopStep):
		// The reply stream ends when the interpreter does.
		o.died = exitDescription(p.waitErr)
	case !ok || rep.Status == "protocol":
		p.kill()
		o.died = "the Python driver stopped answering (" + protocolProblem(rep, ok) + ") and was killed"
	case rep.ID == nil || *rep.ID != c.id || rep.PID != p.cmd.Process.Pid:
		p.kill()
		o.died = "a line that was not the driver's answer to this command came on its reply channel " +
			"(the code wrote to descriptor 4, or a forked process answered), so the process was killed"
	case rep.Status == "input":
		c.waiting, c.prompt = true, strings.TrimSpace(printable(rep.Prompt))
		if c.prompt == "" {
			c.prompt = "(no prompt text)"
		}
		c.hidden = rep.Hidden || envs.SecretPrompt(c.prompt)
		o.running = envs.WaitingNote(c.prompt, c.hidden)
	default:
		o.reply, o.replied = rep, true
	}
}

func protocolProblem(rep reply, ok bool) string {
	if !ok {
		return "its reply stream closed"
	}
	return rep.Error
}

// stopWord says why ctx ended, to start a note.
func stopWord(ctx context.Context) string {
	if ctx.Err() == context.DeadlineExceeded {
		return "Timed out"
	}
	return "Cancelled"
}

// interruption says how a cell was interrupted, for the start of a note.
func interruption(c *cell) string {
	elapsed := c.stopAt
	if elapsed >= time.Second {
		elapsed = elapsed.Round(100 * time.Millisecond)
	} else {
		elapsed = elapsed.Round(time.Millisecond)
	}
	return fmt.Sprintf("%s after %v", c.stop, elapsed)
}

package bash

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/internal/term"
)

// Polling for a command that waits for input: the first look, the longest
// gap between looks, and the gap that confirms a first sighting.
const (
	pollFirst   = 10 * time.Millisecond
	pollMax     = 100 * time.Millisecond
	pollConfirm = 20 * time.Millisecond
)

// await waits for the command's marker, the shell's end, the context, the
// timeout (when not 0), the command stopping to wait for input, or the
// shell reading its next command line without having printed the marker,
// reading the terminal meanwhile.
func (s *Shell) await(ctx context.Context, p *proc, start time.Time, timeout time.Duration) outcome {
	interval := pollFirst
	pollAt := start.Add(interval)
	seen, seenTotal := false, int64(0)
	for {
		until := pollAt
		if end := start.Add(timeout); timeout > 0 && end.Before(until) {
			until = end
		}
		fr, ev := p.next(ctx, until)
		switch ev {
		case evFrame:
			return outcome{fr: &fr}
		case evExited:
			return s.died(p)
		case evCtx:
			if o, ok := s.ended(p); ok {
				return o
			}
			return s.interrupt(p, stopReason(ctx, start), "")
		}
		now := time.Now()
		if timeout > 0 && !now.Before(start.Add(timeout)) {
			if o, ok := s.ended(p); ok {
				return o
			}
			return s.interrupt(p, fmt.Sprintf("[Timed out after %v.", roundDuration(timeout)), "")
		}
		if now.Before(pollAt) {
			continue
		}
		interval = min(interval*2, pollMax)
		if pg, err := term.Foreground(p.master); err == nil {
			if pg == p.pid {
				if o, ok := s.ended(p); ok {
					return o
				}
			}
			if _, ok := term.ReadingTerminal(pg, p.tty); ok {
				total := p.stream.outputTotal()
				if seen && total == seenTotal {
					// The shell itself reads the terminal once a command is
					// over, so the marker may be written and not yet read:
					// read what is there before calling it a question.
					switch fr, ev := p.next(ctx, time.Now().Add(pollConfirm)); ev {
					case evFrame:
						return outcome{fr: &fr}
					case evExited:
						return s.died(p)
					case evCtx:
						return s.interrupt(p, stopReason(ctx, start), "")
					}
					if p.stream.outputTotal() != seenTotal {
						seen = false // more output came: not waiting after all
						pollAt = time.Now().Add(interval)
						continue
					}
					q := s.question(p)
					if ctx.Value(keepKey{}) != nil {
						return outcome{waiting: q, note: fmt.Sprintf("[Waiting for input: %q. The command is still running; the text of the next command is typed to it as the answer.]", q)}
					}
					return s.interrupt(p, fmt.Sprintf("[The command is waiting for input: %q (the last line of its output).", q), inputHint)
				}
				seen, seenTotal, interval = true, total, pollConfirm
			} else {
				seen = false
			}
		}
		pollAt = time.Now().Add(interval)
	}
}

// ended reports a command that is over although its marker never came, as
// when it changed PS1: the shell reads its next command line, twice
// pollConfirm apart with no marker in between. A Ctrl-C then would only
// make the shell prompt again.
func (s *Shell) ended(p *proc) (outcome, bool) {
	if !p.atPrompt() {
		return outcome{}, false
	}
	if fr, ev := p.next(context.Background(), time.Now().Add(pollConfirm)); ev == evFrame {
		return outcome{fr: &fr}, true
	} else if ev == evExited {
		return s.died(p), true
	}
	if p.atPrompt() {
		return outcome{bare: true}, true
	}
	return outcome{}, false
}

const inputHint = " Commands here cannot answer prompts: use the program's non-interactive flags (such as -y, --yes, --assume-yes, --batch, --non-interactive, --no-input), give the answer on stdin (printf 'y\\n' | command), or pass secrets in files or environment variables."

// question returns the last non-empty line of the command's output.
func (s *Shell) question(p *proc) string {
	if line := strings.TrimSpace(p.stream.lastLine()); line != "" {
		return line
	}
	p.stream.mu.Lock()
	var text string
	if p.stream.out != nil {
		text = p.stream.out.String()
	}
	p.stream.mu.Unlock()
	lines := strings.Split(strings.TrimRight(text, "\n \t"), "\n")
	if q := strings.TrimSpace(lines[len(lines)-1]); q != "" {
		return q
	}
	return "(no prompt text)"
}

// stopReason says why a command is being stopped, from its context.
func stopReason(ctx context.Context, start time.Time) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if d, ok := ctx.Deadline(); ok {
			return fmt.Sprintf("[Timed out after %v.", roundDuration(d.Sub(start)))
		}
		return "[Timed out."
	}
	return "[Cancelled."
}

func stopWord(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the deadline had passed"
	}
	return "the command was cancelled"
}

// roundDuration rounds d for messages: 1.5s, 2m0s.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

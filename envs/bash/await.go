package bash

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// Polling for a command that waits for input: the first look, the longest
// gap between looks, and the gap that confirms a first sighting. The gap
// grows to a second for a command that has run a while, so that one
// watched for minutes costs next to nothing.
const (
	pollFirst   = 10 * time.Millisecond
	pollMax     = 100 * time.Millisecond
	pollConfirm = 20 * time.Millisecond
)

// pollCap is the longest gap between looks at a command that has run for
// d: pollMax for the first two seconds, then half a second, then, after
// ten seconds, a second.
func pollCap(d time.Duration) time.Duration {
	switch {
	case d < 2*time.Second:
		return pollMax
	case d < 10*time.Second:
		return 500 * time.Millisecond
	}
	return time.Second
}

// await waits for the command's marker, the shell's end, the context, a
// soft limit, the command stopping to wait for input, or the shell reading
// its next command line without having printed the marker, reading the
// terminal meanwhile.
func (s *Shell) await(ctx context.Context, p *proc, j *job, limits envs.Limits) outcome {
	start := time.Now()
	changed, total := start, p.stream.outputTotal()
	_, soft := limits.Due(start, changed)
	interval := pollFirst
	pollAt := start.Add(interval)
	seen, seenTotal := false, int64(0)
	for {
		until := pollAt
		if !soft.IsZero() && soft.Before(until) {
			until = soft
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
			return s.interrupt(p, j, stopReason(ctx, start), "")
		}
		now := time.Now()
		if t := p.stream.outputTotal(); t != total {
			changed, total = now, t
		}
		var why string
		if why, soft = limits.Due(now, changed); why != "" {
			if o, ok := s.ended(p); ok {
				return o
			}
			return outcome{running: envs.RunningNote(why)}
		}
		if now.Before(pollAt) {
			continue
		}
		interval = min(interval*2, pollCap(now.Sub(start)))
		if pg, err := term.Foreground(p.master); err == nil {
			if pg == p.pid {
				if o, ok := s.ended(p); ok {
					return o
				}
			}
			// A program still to read what was typed to it (an answer)
			// is not waiting for more.
			if p.asks(pg) && p.inputRead() {
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
						return s.interrupt(p, j, stopReason(ctx, start), "")
					}
					if p.stream.outputTotal() != seenTotal {
						seen = false // more output came: not waiting after all
						pollAt = time.Now().Add(interval)
						continue
					}
					return outcome{waiting: s.question(p, j)}
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

// question returns the last non-empty line of the command's output: the
// unfinished line, else the last line of this call's output, else the
// last line the earlier responses showed.
func (s *Shell) question(p *proc, j *job) string {
	// A line editor echoes the Ctrl-C that left it at its prompt as ^C.
	if line := strings.TrimSpace(strings.TrimSuffix(p.stream.lastLine(), "^C")); line != "" {
		return line
	}
	p.stream.mu.Lock()
	var text string
	if p.stream.out != nil {
		text = p.stream.out.String()
	}
	p.stream.mu.Unlock()
	if q := envs.LastLine(text); q != "" {
		return q
	}
	if j.last != "" {
		return j.last
	}
	return "(no prompt text)"
}

// stopReason says why a command is being stopped, from its context.
func stopReason(ctx context.Context, start time.Time) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if d, ok := ctx.Deadline(); ok {
			return fmt.Sprintf("[Timed out after %v.", envs.Round(d.Sub(start)))
		}
		return "[Timed out."
	}
	return "[Cancelled."
}

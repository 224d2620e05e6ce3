package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/unfold-dev/unfold/agent"
)

// waitEvery is how often a run not on a terminal says it still waits for
// the model.
var waitEvery = 15 * time.Second

// progress prints what a run does: a line per model call, tool call and
// retry, and while the model is called, the time waited (a line updated in
// place on a terminal, a plain line every waitEvery otherwise).
type progress struct {
	w    io.Writer
	tty  bool
	tick time.Duration

	mu      sync.Mutex // guards the fields below and writes to w
	waiting bool       // a line updated in place is on the screen
	since   time.Time  // when the model call started
	done    chan struct{}
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, tick: waitEvery}
	under := w
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		under = u.Unwrap()
	}
	if f, ok := under.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.tick = true, time.Second
	}
	return p
}

// report is the agent's OnProgress.
func (p *progress) report(ev agent.Progress) {
	if ev.Kind == "request" {
		p.wait(ev.Step)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Kind == "model" || ev.Kind == "retry" {
		p.stopLocked()
	}
	p.clearLocked()
	status := "ok"
	if !ev.Success {
		status = "failed"
	}
	var what string
	switch ev.Kind {
	case "model":
		u := ev.StepUsage
		what = fmt.Sprintf("model: %-14s in %d (cached %d, shared prefix %s)  out %d  %s", ev.Detail, u.PromptTokens, u.CachedTokens,
			percent(u.PrefixTokens, u.RequestTokens), u.CompletionTokens, time.Since(p.since).Round(10*time.Millisecond))
		fmt.Fprintf(p.w, "step %d  %s\n", ev.Step, what)
		return
	case "retry":
		what = fmt.Sprintf("retrying in %s: %s", ev.Retry.Delay.Round(time.Millisecond), ev.Retry.Reason)
	case "tool":
		what = fmt.Sprintf("tool %s: %s", ev.Tool, status)
	case "expansion":
		what = "opened " + ev.Detail
	case "invalid":
		what = "no action in the reply; asked again"
	case "skipped":
		what = "skipped: " + ev.Detail
	case "answer":
		what = "answered"
	case "paused":
		what = "paused by the provider; continuing"
	case "stopped":
		what = "stopped: " + ev.Detail
	default:
		what = ev.Kind
	}
	fmt.Fprintf(p.w, "step %d  %-40s %7d tokens  %s\n", ev.Step, what, ev.Usage.Total(), ev.Elapsed.Round(10*time.Millisecond))
	if ev.Kind == "retry" {
		p.resumeLocked(ev.Step)
	}
}

// wait starts showing the time waited for the model in step.
func (p *progress) wait(step int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
	p.since = time.Now()
	p.resumeLocked(step)
}

// resumeLocked (re)starts the ticker of a model call begun at p.since.
func (p *progress) resumeLocked(step int) {
	done := make(chan struct{})
	p.done = done
	go func() {
		t := time.NewTicker(p.tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.mu.Lock()
				if p.done == done {
					waited := time.Since(p.since).Round(time.Second)
					if p.tty {
						fmt.Fprintf(p.w, "\r\x1b[Kstep %d  waiting for the model  %s", step, waited)
						p.waiting = true
					} else {
						fmt.Fprintf(p.w, "step %d  still waiting for the model (%s)\n", step, waited)
					}
				}
				p.mu.Unlock()
			}
		}
	}()
}

func (p *progress) stopLocked() {
	if p.done != nil {
		close(p.done)
		p.done = nil
	}
}

func (p *progress) clearLocked() {
	if p.waiting {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.waiting = false
	}
}

// stop ends the ticker and clears its line.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
	p.clearLocked()
}

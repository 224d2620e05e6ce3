package interactive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// result is how waiting for the prompt ended.
type result int

const (
	done        result = iota // the prompt is back
	exited                    // the program ended
	interrupted               // ctx ended; Ctrl-C brought the prompt back
	stopped                   // ctx ended; the program ignored Ctrl-C and was stopped
	incomplete                // the program shows its continuation prompt and waits for more
	cancelled                 // ctx ended (waitPrompt only)
)

// incompleteAfter is how long the continuation prompt must stand, with all
// input read, before the input counts as incomplete.
const incompleteAfter = 150 * time.Millisecond

// recheck is how often the prompt is looked at again while the program has
// not read all of its input yet.
const recheck = 5 * time.Millisecond

// proc is one run of the program on a pseudo-terminal.
type proc struct {
	cmd    *exec.Cmd
	pid    int
	master *os.File
	slave  *os.File // kept open to ask how much typed input is unread
	prompt *regexp.Regexp
	cont   *regexp.Regexp // continuation prompt at the end of a line; nil if unknown

	exited   chan struct{} // closed once the program has been waited for
	status   string        // how it ended; set before exited is closed
	readDone chan struct{} // closed when the reader goroutine ends
	changed  chan struct{} // capacity 1: output arrived

	mu  sync.Mutex // guards out and f
	out *envs.Output
	f   *term.Filter

	stopOnce sync.Once
	stopErr  error
}

func startProc(args []string, dir string, env []string, prompt, cont *regexp.Regexp) (*proc, error) {
	master, slave, err := term.OpenPTY()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if err := term.Start(cmd, slave); err != nil {
		master.Close()
		slave.Close()
		return nil, err
	}
	out := envs.NewOutput(4 << 10)
	p := &proc{
		cmd:      cmd,
		pid:      cmd.Process.Pid,
		master:   master,
		slave:    slave,
		prompt:   prompt,
		cont:     cont,
		exited:   make(chan struct{}),
		readDone: make(chan struct{}),
		changed:  make(chan struct{}, 1),
		out:      out,
		f:        term.NewFilter(out),
	}
	go p.read()
	go p.wait4()
	return p, nil
}

func (p *proc) read() {
	defer close(p.readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			_, _ = p.f.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proc) wait4() {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.status = fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		} else {
			p.status = fmt.Sprintf("exited with status %d", ee.ExitCode())
		}
	case err != nil:
		p.status = "ended: " + err.Error()
	default:
		p.status = "exited with status 0"
	}
	close(p.exited)
}

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// send types command and waits for the prompt; it returns the output
// before the prompt.
func (p *proc) send(ctx context.Context, command string, limit int) (string, result) {
	out := envs.NewOutput(limit)
	p.mu.Lock()
	_ = p.f.Flush()
	p.out, p.f = out, term.NewFilter(out)
	p.mu.Unlock()
	text := command
	if len(text) == 0 || text[len(text)-1] != '\n' {
		text += "\n"
	}
	if _, err := p.master.Write([]byte(text)); err != nil {
		<-p.exited
		return out.String(), exited
	}
	o := p.waitPrompt(ctx)
	if o == cancelled {
		o = p.interrupt()
	}
	if o != done {
		p.mu.Lock()
		_ = p.f.Flush()
		p.mu.Unlock()
	}
	return out.String(), o
}

// wait waits for the prompt without typing anything.
func (p *proc) wait(ctx context.Context) (string, result) {
	o := p.waitPrompt(ctx)
	p.mu.Lock()
	_ = p.f.Flush()
	text := p.out.String()
	p.mu.Unlock()
	return text, o
}

// lineState says what the current output line shows: the prompt, the
// continuation prompt, or neither; and whether the program has read
// everything typed to it.
func (p *proc) lineState() (prompt, cont, drained bool) {
	p.mu.Lock()
	line := p.f.Line()
	prompt = p.prompt.Match(line)
	cont = !prompt && p.cont != nil && p.cont.Match(line)
	p.mu.Unlock()
	if prompt || cont {
		n, err := term.InputQueued(p.slave)
		drained = err == nil && n == 0
	}
	return prompt, cont, drained
}

// waitPrompt waits until the prompt is back and the output has been still
// for a moment (done, the prompt cut from the output), the continuation
// prompt has stood for a while (incomplete), the program ended (exited) or
// ctx ended (cancelled).
func (p *proc) waitPrompt(ctx context.Context) result {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	check := func() {
		prompt, cont, drained := p.lineState()
		switch {
		case prompt && drained:
			timer.Reset(quiet)
		case cont && drained:
			timer.Reset(incompleteAfter)
		case prompt || cont:
			timer.Reset(recheck)
		default:
			timer.Stop()
		}
	}
	check()
	for {
		select {
		case <-p.changed:
			check()
		case <-timer.C:
			select {
			case <-p.changed:
				check()
				continue
			default:
			}
			prompt, cont, drained := p.lineState()
			switch {
			case prompt && drained:
				p.mu.Lock()
				if loc := p.prompt.FindIndex(p.f.Line()); loc != nil {
					p.f.Cut(loc[0])
				}
				_ = p.f.Flush()
				p.mu.Unlock()
				return done
			case cont && drained:
				p.mu.Lock()
				if loc := p.cont.FindIndex(p.f.Line()); loc != nil {
					p.f.Cut(loc[0])
				}
				_ = p.f.Flush()
				p.mu.Unlock()
				return incomplete
			}
			check()
		case <-p.exited:
			t := time.NewTimer(50 * time.Millisecond)
			select {
			case <-p.readDone:
			case <-t.C:
			}
			t.Stop()
			return exited
		case <-ctx.Done():
			return cancelled
		}
	}
}

// interrupt sends Ctrl-C and waits briefly for the prompt; a program that
// does not show it is stopped.
func (p *proc) interrupt() result {
	_, _ = p.master.Write([]byte{3})
	ctx, cancel := context.WithTimeout(context.Background(), interruptGrace)
	defer cancel()
	switch p.waitPrompt(ctx) {
	case done:
		return interrupted
	case exited:
		return exited
	}
	_ = p.stop()
	return stopped
}

// stop ends the program's session: a hangup (the terminal closes), then
// SIGTERM, then SIGKILL. It is idempotent.
func (p *proc) stop() error {
	p.stopOnce.Do(func() {
		p.master.Close()
		p.stopErr = term.EndSession(p.pid, p.pid)
		p.slave.Close()
		t := time.NewTimer(term.KillGrace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		<-p.readDone
	})
	return p.stopErr
}

package interactive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/procs"
	"github.com/unfold-dev/unfold/internal/term"
	"github.com/unfold-dev/unfold/internal/utf8cut"
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
	soft                      // a soft limit gave control back; the command runs on
	asking                    // the command waits for input, not at the prompt; it runs on
)

// lookAfter is how long the output must be still, away from the prompt,
// before the environment looks whether the program waits for input;
// lookMax is the longest gap between such looks while nothing changes.
const (
	lookAfter = 30 * time.Millisecond
	lookMax   = time.Second
)

// incompleteAfter is how long the continuation prompt must stand, with all
// input read, before the input counts as incomplete.
const incompleteAfter = 150 * time.Millisecond

// promptsShort is how long the prompt must stand, with all input read and
// the output still, when the program printed fewer prompts than lines were
// typed.
const promptsShort = 300 * time.Millisecond

// betweenCap bounds the output kept from between two commands.
const betweenCap = 8 << 10

// recheck is how often the prompt is looked at again while the program has
// not read all of its input yet.
const recheck = 5 * time.Millisecond

// proc is one run of the program on a pseudo-terminal.
type proc struct {
	cmd    *exec.Cmd
	pid    int
	began  time.Time    // when it was started
	ready  bool         // it showed its first prompt and ran the init commands; set by the holder of the turn
	size   term.Size    // the terminal's size once ready, which each command starts with; set with ready
	group  *procs.Group // the program and everything it started
	limits procs.Limits // set on the program, to name one that ended it
	master *os.File
	slave  *os.File // kept open to ask how much typed input is unread
	prompt *regexp.Regexp
	cont   *regexp.Regexp // continuation prompt at the end of a line; nil if unknown

	softWhy  string        // why waitPrompt last returned soft; used by the holder of the turn
	told     bool          // a response said that it ended; used by the holder of the turn
	name     string        // the environment's name, for messages
	typing   *typist       // the text being typed, nil if none; used by the holder of the turn
	typedCut string        // what stopTyping said when Ctrl-C cut typing short; used by the holder of the turn
	kept     bool          // the last Ctrl-C left it reading away from its prompt, and nothing was typed since; used by the holder of the turn
	exited   chan struct{} // closed once the program has been waited for
	status   string        // how it ended; set before exited is closed
	readDone chan struct{} // closed when the reader goroutine ends
	changed  chan struct{} // capacity 1: output arrived

	lead  *regexp.Regexp // a prompt or continuation prompt at the start of a line
	spool *envs.Spool    // where a command's output goes past the limit; set before the first command

	mu      sync.Mutex   // guards out, skip, f, lines and prompts
	out     *envs.Output // the output of the command under way, or since the last one ended
	skip    []byte       // the start of the current line, shown in the last response already
	f       *term.Filter // writes to sink
	sink    lineSink
	lines   int // lines typed for the command under way
	prompts int // prompts and continuation prompts it printed, in finished lines

	stopOnce sync.Once
	stopErr  error
}

func startProc(args []string, dir string, env []string, prompt, cont, lead *regexp.Regexp, resources procs.Limits) (*proc, error) {
	master, slave, err := term.OpenPTY()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	group := procs.NewGroup()
	cmd.Env = append(env[:len(env):len(env)], group.Env())
	err = group.Start(cmd, func() error { return term.Start(cmd, slave) })
	if err == nil {
		if err = resources.Apply(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	if err != nil {
		group.Close()
		master.Close()
		slave.Close()
		return nil, err
	}
	out := envs.NewOutput(4 << 10)
	p := &proc{
		cmd:      cmd,
		pid:      cmd.Process.Pid,
		began:    time.Now(),
		group:    group,
		limits:   resources,
		master:   master,
		slave:    slave,
		prompt:   prompt,
		cont:     cont,
		lead:     lead,
		exited:   make(chan struct{}),
		readDone: make(chan struct{}),
		changed:  make(chan struct{}, 1),
		out:      out,
	}
	p.sink = lineSink{p}
	p.f = term.NewFilter(p.sink)
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
			if why := p.limits.Reached(p.cmd.ProcessState); why != "" {
				p.status += ": " + why
			}
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

// send types command and waits for the prompt (see waitPrompt); it
// returns what the program printed since the last command ended (less the
// prompt it ends with, within [betweenCap] bytes), and the command's output
// before the prompt, or so far.
func (p *proc) send(ctx context.Context, command string, limits envs.Limits, outputLimit int) (between, output string, o result) {
	// Each command sees the size the program and the init commands left,
	// whatever an earlier command set.
	if p.ready {
		_ = term.SetSize(p.master, p.size)
	}
	out := p.spool.Output(outputLimit)
	p.mu.Lock()
	// between leaves the filter at the start of a line; it keeps what
	// it knows of the terminal's modes (see pastes).
	between = p.between()
	p.out, p.skip = out, nil
	p.lines, p.prompts = strings.Count(strings.TrimSuffix(command, "\n"), "\n")+1, 0
	p.mu.Unlock()
	if err := p.typeLine(command); err != nil {
		<-p.exited
		return between, out.String(), exited
	}
	output, o = p.await(ctx, limits, outputLimit)
	return between, output, o
}

// between returns what the program printed since the last command ended,
// less the prompt it ends with; under p.mu.
func (p *proc) between() string {
	if loc := p.prompt.FindIndex(p.f.Line()); loc != nil {
		p.f.Cut(loc[0])
	}
	_ = p.f.Flush()
	return p.out.String()
}

// lastOutput returns what the program printed after the last response, once
// it has ended (after stop): the output since the last command ended, or
// what a command running on printed since it was last shown.
func (p *proc) lastOutput() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Trim(p.between(), "\n")
}

// idle starts collecting the output printed between commands, dropping
// what was printed before (such as a start's banner).
func (p *proc) idle() {
	p.mu.Lock()
	p.out = envs.NewOutput(betweenCap)
	p.mu.Unlock()
}

// await waits for the prompt of the command under way (see waitPrompt)
// and returns the output since the last call, handing the output of a
// command that runs on to a new buffer.
func (p *proc) await(ctx context.Context, limits envs.Limits, outputLimit int) (string, result) {
	o := p.waitPrompt(ctx, limits)
	if o == cancelled {
		o = p.interrupt()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if o == soft || o == asking {
		// The unfinished line (a question, say) is shown now and kept for
		// the prompt to be recognized at its end; when it is finished, what
		// was shown is not written again. A character not complete yet
		// is held back for the next response, which completes it.
		line := p.f.Line()
		line = line[:len(line)-utf8cut.Partial(line)]
		text := p.out.String() + strings.ToValidUTF8(string(line), "\uFFFD")
		p.out, p.skip = p.spool.Output(outputLimit), append(p.skip[:0], line...)
		return text, o
	}
	if o != done {
		_ = p.f.Flush()
	}
	// The command is over: what the program prints from now on is kept
	// for the next command's response.
	text := p.out.String()
	p.out = envs.NewOutput(betweenCap)
	return text, o
}

// lineSink is where a proc's filter writes: the output of the command
// under way, less the start of a line shown in an earlier response.
type lineSink struct{ p *proc }

// Write is called by the filter, under the proc's mutex. It counts the
// prompts at the starts of the lines.
func (s lineSink) Write(b []byte) (int, error) {
	n := len(b)
	for rest := b; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		s.p.prompts += leadCount(s.p.lead, line)
	}
	if skip := s.p.skip; len(skip) > 0 {
		if bytes.HasPrefix(b, skip) {
			b = b[len(skip):]
		}
		s.p.skip = skip[:0]
	}
	_, _ = s.p.out.Write(b)
	return n, nil
}

// reading reports whether the program waits to read the terminal away
// from its prompt, having read all that was typed: a question of its own.
// A line editor reads typed input a key at a time, so a program still
// reading what was typed is not asking yet.
func (p *proc) reading() bool {
	prompt, cont, _ := p.lineState()
	if prompt || cont || !p.typingDone() {
		return false
	}
	if n, err := term.InputQueued(p.slave); err != nil || n > 0 {
		return false
	}
	// Output written and not read yet may be the prompt.
	if n, err := term.InputQueued(p.master); err != nil || n > 0 {
		return false
	}
	if pid, _ := p.terminalReader(); pid == 0 {
		return false
	}
	// The output reader may have taken the prompt from the terminal and
	// not handled it yet: look at the line again once it has had a moment.
	time.Sleep(readingSettle)
	prompt, cont, _ = p.lineState()
	return !prompt && !cont
}

// terminalReader returns the process that waits to read the terminal
// (see [term.ReadingTerminalUnder]), or 0 when none does, and the
// terminal's foreground process group, or 0 when it cannot be read.
func (p *proc) terminalReader() (pid, pg int) {
	pg, err := term.Foreground(p.master)
	if err != nil {
		return 0, 0
	}
	pid, _ = term.ReadingTerminalUnder(p.pid, pg, p.slave.Name())
	return pid, pg
}

// readingSettle is how long reading waits, once the program reads the
// terminal, for output already read from it to be handled.
const readingSettle = 20 * time.Millisecond

// leadCount counts the prompts and continuation prompts at the start of
// line: a line editor given several lines at once may print them one
// after the other.
func leadCount(lead *regexp.Regexp, line []byte) int {
	n := 0
	for {
		loc := lead.FindIndex(line)
		if loc == nil || loc[1] == 0 {
			return n
		}
		n++
		line = line[loc[1]:]
	}
}

// lineState says what the current output line shows: the prompt, the
// continuation prompt, or neither; and whether the program has read
// everything typed to it.
func (p *proc) lineState() (prompt, cont, drained bool) {
	prompt, cont, drained, _ = p.state()
	return prompt, cont, drained
}

// state is lineState, and whether the program printed a prompt for every
// line typed: a program that reads several lines prints one after each, so
// fewer mean that the last ones are still being run.
func (p *proc) state() (prompt, cont, drained, counted bool) {
	p.mu.Lock()
	line := p.f.Line()
	prompt = p.prompt.Match(line)
	cont = !prompt && p.cont != nil && p.cont.Match(line)
	counted = p.prompts+leadCount(p.lead, line) >= p.lines
	p.mu.Unlock()
	if prompt || cont {
		n, err := term.InputQueued(p.slave)
		drained = err == nil && n == 0 && p.typingDone()
	}
	return prompt, cont, drained, counted
}

// waitPrompt waits until the prompt is back and the output has been still
// for a moment (done, the prompt cut from the output), the continuation
// prompt has stood for a while (incomplete), the program ended (exited),
// ctx ended (cancelled), a soft limit passed (soft), or the program waits
// to read the terminal away from its prompt (asking).
func (p *proc) waitPrompt(ctx context.Context, limits envs.Limits) result {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	lookEvery, seen := lookAfter, false
	look := time.NewTimer(lookEvery)
	defer look.Stop()
	changed := time.Now()
	var softC <-chan time.Time
	softT := time.NewTimer(time.Hour)
	defer softT.Stop()
	armSoft := func() bool {
		why, next := limits.Due(time.Now(), changed)
		if why != "" {
			p.softWhy = why
			return false
		}
		softC = nil
		if !next.IsZero() {
			softT.Reset(time.Until(next))
			softC = softT.C
		}
		return true
	}
	if !armSoft() {
		return soft
	}
	check := func() {
		prompt, cont, drained, counted := p.state()
		switch {
		case prompt && drained && counted:
			timer.Reset(quiet)
		case prompt && drained:
			// A prompt is missing: the program may still be running a
			// line it read, or it read one without prompting (an input()
			// the command answered itself). Give it longer.
			timer.Reset(promptsShort)
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
			changed = time.Now()
			lookEvery, seen = lookAfter, false
			look.Reset(lookEvery)
			check()
		case <-timer.C:
			select {
			case <-p.changed:
				changed = time.Now()
				lookEvery, seen = lookAfter, false
				look.Reset(lookEvery)
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
		case <-look.C:
			if p.reading() {
				if seen {
					return asking
				}
				// Confirm a while later, as the prompt may be on its way.
				seen = true
				look.Reset(lookAfter)
				continue
			}
			seen = false
			// Look again, less and less often, while nothing changes.
			lookEvery = min(2*lookEvery, lookMax)
			look.Reset(lookEvery)
		case <-softC:
			if !armSoft() {
				if prompt, _, drained := p.lineState(); prompt && drained {
					// The command is over: its prompt stands.
					continue
				}
				return soft
			}
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
// does not show it is stopped, unless it reads its terminal again away
// from the prompt (asking): it is alive and waits for input, at a prompt
// the spec does not match (changed by sqlite3's .prompt, Python's
// sys.ps1) or at a question, and stopping it would lose its state. It is
// kept once: when the Ctrl-C before left it so too, with nothing typed
// since, it ignores Ctrl-C and would hold the environment for ever (a
// loop reading input with SIGINT ignored), so it is stopped.
func (p *proc) interrupt() result {
	if cut := p.stopTyping(); cut != "" {
		p.typedCut = cut
	}
	again := p.kept
	p.kept = false
	_, _ = p.master.Write([]byte{3})
	ctx, cancel := context.WithTimeout(context.Background(), interruptGrace)
	defer cancel()
	switch p.waitPrompt(ctx, envs.Limits{Quiet: -1}) {
	case done:
		return interrupted
	case exited:
		return exited
	case asking:
		if !again {
			p.kept = true
			return asking
		}
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
		// What left the session (setsid, a daemon) is still in the group.
		p.stopErr = errors.Join(p.stopErr, p.group.Kill())
		p.group.Close()
	})
	return p.stopErr
}

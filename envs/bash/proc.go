package bash

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// startTimeout bounds how long a new shell may take to print its first
// marker.
const startTimeout = 10 * time.Second

// proc is one running bash on a pseudo-terminal.
type proc struct {
	cmd         *exec.Cmd
	pid         int
	master      *os.File
	tty         string        // the slave's path, as /proc/<pid>/fd links show it
	exe         string        // the shell's program, as /proc/<pid>/exe names it
	dir         string        // private directory for command files
	file        string        // the command file
	cmdf        *os.File      // the command file, open for rewriting
	cmdLen      int           // the command file's length
	quotedFile  string        // file quoted for the shell
	line        []byte        // the line typed for the last command, reused
	noTyping    bool          // a command may have defined aliases or changed the line editor: source every command
	number      int64         // the command number of the last marker that counted
	secret      string        // the session's secret, in the marker's tag
	psLen       int           // the length of PS1 as the shell set it up
	promptRead  term.ReadCall // how the shell reads a command line, once known
	promptKnown bool          // promptRead is known
	reader      *term.Reader
	stream      *stream

	dying    atomic.Bool   // the shell ended; set before it is reaped
	exited   chan struct{} // closed once the shell has been waited for
	status   string        // how the shell ended; set before exited is closed
	readDone chan struct{} // closed when the terminal is closed or hung up
	readOnce sync.Once

	// The terminal is read through reader, by one goroutine at a time,
	// the holder of readMu: the command's own goroutine while a command
	// runs (no hand-off between goroutines, nor through the runtime's
	// poller, on the way to its marker), and between commands, after
	// idleDrain, a drain goroutine started by idle, so that background
	// jobs never block on a full terminal (it waits in the kernel too, so
	// an idle shell holds a thread). Either is woken from its wait by
	// reader.Wake: the drain when a command claims the terminal, the
	// command when its context is done or the shell ended.
	readMu   sync.Mutex
	buf      []byte         // read buffer; used by readMu's holder
	idle     *time.Timer    // starts drain
	claiming atomic.Bool    // a command waits to take readMu from drain
	drains   sync.WaitGroup // drain runs armed or running
	live     atomic.Int32   // the same count, readable without waiting
	idleMu   sync.Mutex     // guards idle's arming and stopped
	stopped  bool           // stop has begun: idle is not armed again

	stopOnce sync.Once
	stopErr  error
}

// startProc starts bash in dir and waits for its first marker.
func startProc(bashPath, dir string, env []string) (*proc, error) {
	tmp, err := tempDir()
	if err != nil {
		return nil, err
	}
	secret := rand.Text()[:secretLen]
	file := filepath.Join(tmp, "c")
	init := filepath.Join(tmp, "init")
	// The init script knows the line that sources the command file as
	// submit types it.
	if err := os.WriteFile(init, fmt.Appendf(nil, initScript, secret, quote(". "+quote(file))), 0o600); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	cmdf, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	master, reader, slave, err := term.OpenDirect()
	if err != nil {
		cmdf.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd := exec.Command(bashPath, "--norc", "--noprofile", "--noediting", "-i")
	cmd.Dir = dir
	cmd.Env = env
	err = term.Start(cmd, slave)
	tty := slave.Name()
	slave.Close()
	if err != nil {
		reader.Close()
		master.Close()
		cmdf.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	p := &proc{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		master:     master,
		tty:        tty,
		exe:        term.Executable(cmd.Process.Pid),
		dir:        tmp,
		file:       file,
		quotedFile: quote(file),
		cmdf:       cmdf,
		reader:     reader,
		number:     -1,
		secret:     secret,
		stream:     newStream(secret, cmd.Process.Pid),
		exited:     make(chan struct{}),
		readDone:   make(chan struct{}),
		buf:        make([]byte, readSize),
	}
	p.idle = time.AfterFunc(time.Hour, p.drain)
	p.idle.Stop()
	p.readMu.Lock()
	go p.wait()
	p.stream.expect(p.number, envs.NewOutput(4<<10))
	if _, err := p.master.Write([]byte(" . " + quote(init) + "\n")); err != nil {
		p.readMu.Unlock()
		p.stop()
		return nil, err
	}
	fr, ev := p.next(context.Background(), time.Now().Add(startTimeout))
	switch ev {
	case evFrame:
		p.number, p.psLen = fr.number, fr.psLen
		p.stream.finish()
		p.stream.background() // bash's greeting, if any
		p.promptRead, p.promptKnown = learnPromptRead(p.pid)
		if !p.promptKnown {
			// A command that changes PS1 could not be told from one
			// that waits for input: have PS1 put back every time.
			if _, _, _, _, ok := p.guard(context.Background(), "0", envs.NewOutput(4<<10), 4<<10); !ok {
				p.readMu.Unlock()
				p.stop()
				return nil, fmt.Errorf("the shell did not answer its setup within %v", fixWait)
			}
			p.stream.finish()
		}
		p.release()
		return p, nil
	case evExited:
		p.readMu.Unlock()
		p.stop()
		return nil, fmt.Errorf("the shell ended while starting (%s)", p.status)
	default:
		p.readMu.Unlock()
		p.stop()
		return nil, fmt.Errorf("the shell did not answer within %v of starting", startTimeout)
	}
}

// learnWait bounds the wait for a new shell to block reading its first
// command line.
const learnWait = 200 * time.Millisecond

// learnPromptRead returns how the shell pid reads a command line, seen
// while it waits for its first one: the read(2) of its input at the place
// and with the count it always uses there. The read builtin, readarray
// and the rest read elsewhere or with other counts. It reports false when
// that cannot be seen (no /proc/<pid>/syscall to read), or when the count
// is 1, which could be a read of a single key anywhere.
func learnPromptRead(pid int) (term.ReadCall, bool) {
	for deadline := time.Now().Add(learnWait); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if rc, ok := term.BlockedRead(pid); ok {
			return rc, rc.FD == 0 && rc.Count > 1
		}
	}
	return term.ReadCall{}, false
}

// atPrompt reports whether the shell is reading a command line with
// nothing typed waiting for it: it ended the command without the marker,
// as after a command that changed PS1 or turned promptvars off. A line
// typed a moment ago may not be queued yet; callers confirm a while later.
func (p *proc) atPrompt() bool {
	if !p.promptKnown {
		return false
	}
	if rc, ok := term.BlockedRead(p.pid); !ok || rc != p.promptRead {
		return false
	}
	f, err := os.OpenFile(p.tty, os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	n, err := term.InputQueued(f)
	return err == nil && n == 0
}

// guardGrace bounds the wait for the guard line's marker once the
// caller's context is done: the line takes a millisecond or so.
const guardGrace = 500 * time.Millisecond

// guard types guardLine, as the holder of readMu, with status (a number,
// or "$?"): from then on PROMPT_COMMAND puts PS1 back before every
// prompt. It returns the guard line's frame, the text the changed prompt
// printed before and after its marker (the whole prompt when it had none),
// for the caller to cut from the output, and other output that came
// meanwhile (from background jobs, say), for the caller to add after the
// cut. It waits up to fixWait, or guardGrace once ctx is done.
//
// A marker that comes before the guard line's (whose text holds the
// secret) is the command's, whose line the shell had not read yet: what
// came before it is the command's output, and goes to out.
func (p *proc) guard(ctx context.Context, status string, out *envs.Output, limit int) (fr frame, before, after, extra string, ok bool) {
	mine := envs.NewOutput(limit)
	p.stream.expect(p.number, mine)
	if _, err := fmt.Fprintf(p.master, guardLine, status); err != nil {
		return frame{}, "", "", "", false
	}
	deadline := time.Now().Add(fixWait)
	for range 2 {
		fr, ev := p.next(ctx, deadline)
		if ev == evCtx {
			ctx = context.Background()
			if d := time.Now().Add(guardGrace); d.Before(deadline) {
				deadline = d
			}
			fr, ev = p.next(ctx, deadline)
		}
		if ev != evFrame {
			return frame{}, "", "", "", false
		}
		p.number = fr.number
		text := mine.String()
		if parts := strings.SplitN(text, p.secret, 4); len(parts) == 4 {
			return fr, parts[1], parts[2], parts[0] + parts[3], true
		}
		_, _ = out.Write([]byte(text))
		mine = envs.NewOutput(limit)
		p.stream.expect(p.number, mine)
	}
	return frame{}, "", "", "", false
}

// writeCommand replaces the command file's content with command.
func (p *proc) writeCommand(command string) error {
	if _, err := p.cmdf.WriteAt([]byte(command), 0); err != nil {
		return err
	}
	if len(command) < p.cmdLen {
		if err := p.cmdf.Truncate(int64(len(command))); err != nil {
			return err
		}
	}
	p.cmdLen = len(command)
	return nil
}

// secretLen is the length of the session's secret in the marker tag:
// 80 bits from crypto/rand.
const secretLen = 16

// tempDir creates the private directory for command files: in /dev/shm
// (memory) when it can, since a file may be written for every command, else
// in the default place.
func tempDir() (string, error) {
	if dir, err := os.MkdirTemp("/dev/shm", "unfold-bash-"); err == nil {
		return dir, nil
	}
	return os.MkdirTemp("", "unfold-bash-")
}

// readSize is how much one read of the terminal takes at most.
const readSize = 64 << 10

// idleDrain is how long the terminal goes unread after a command before a
// goroutine starts reading it for background output. A command that
// follows sooner takes the terminal over without a hand-off.
const idleDrain = 20 * time.Millisecond

// event is what [proc.next] saw.
type event int

const (
	evFrame    event = iota // the command's marker
	evExited                // the shell ended
	evCtx                   // the context is done
	evDeadline              // the deadline passed
)

// claim takes the terminal over for a command; the caller then reads it
// with next and gives it back with release.
func (p *proc) claim() {
	p.claiming.Store(true)
	p.disarm()
	if p.live.Load() > 0 {
		// A drain that runs, or is about to, sees claiming when woken.
		p.reader.Wake()
	}
	p.readMu.Lock()
	p.claiming.Store(false)
}

// release gives the terminal back after a command; a drain starts after
// idleDrain unless another command claims it first.
func (p *proc) release() {
	p.reader.SpinUntil(time.Time{}) // the drain waits in the kernel
	p.readMu.Unlock()
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	if !p.stopped {
		p.drains.Add(1)
		p.live.Add(1)
		p.idle.Reset(idleDrain)
	}
}

// disarm cancels a drain that has not started.
func (p *proc) disarm() {
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	if p.idle.Stop() {
		p.live.Add(-1)
		p.drains.Done()
	}
}

// drain reads the terminal between commands, until a command claims it or
// the terminal closes.
func (p *proc) drain() {
	defer p.drains.Done()
	defer p.live.Add(-1)
	if !p.readMu.TryLock() {
		return
	}
	defer p.readMu.Unlock()
	// claim sets claiming before it wakes the reader: a wake-up before
	// this look is seen here, one after it ends the wait in Read.
	for !p.claiming.Load() {
		if _, err := p.read(time.Time{}); err != nil {
			return
		}
	}
}

// read waits for the terminal's output until deadline (see term.Reader),
// feeds what it reads to the stream, and records the terminal's end when
// it returns an error. Only the holder of readMu calls it.
func (p *proc) read(deadline time.Time) (int, error) {
	n, err := p.reader.Read(p.buf, deadline)
	if n > 0 {
		p.stream.feed(p.buf[:n])
	}
	if err != nil {
		p.endRead()
	}
	return n, err
}

// kick wakes a command's goroutine from its wait in next, to look at the
// shell's end or the context again.
func (p *proc) kick() {
	p.reader.Wake()
}

// endRead records that the terminal is closed or hung up.
func (p *proc) endRead() {
	p.readOnce.Do(func() { close(p.readDone) })
}

// next reads the terminal into the stream, as the holder of readMu, until
// the expected marker, the shell's end, ctx being done, or deadline. ctx
// and the shell's end are noticed at once when they call kick.
func (p *proc) next(ctx context.Context, deadline time.Time) (frame, event) {
	for {
		select {
		case fr := <-p.stream.done:
			return fr, evFrame
		default:
		}
		select {
		case <-p.readDone:
			return p.waitEnded(ctx, deadline)
		default:
		}
		// A kick after these looks ends the wait in Read; one before
		// them is seen here (and ends the next wait at once).
		if ctx.Err() != nil {
			// The marker may be written and not read yet: a Ctrl-C
			// now would only make the shell prompt again.
			if fr, ok := p.pending(); ok {
				return fr, evFrame
			}
			return frame{}, evCtx
		}
		if !p.alive() {
			return frame{}, evExited
		}
		if _, err := p.read(deadline); err != nil {
			continue
		}
		// Checked after every read, not only one that found nothing, so
		// that output that never pauses cannot hold off the deadline.
		if !time.Now().Before(deadline) {
			if fr, ok := p.pending(); ok {
				return fr, evFrame
			}
			return frame{}, evDeadline
		}
	}
}

// awaitRepeat reads the terminal until the stream has dropped a repeated
// prompt of this shell's since it counted before, or for d at most.
func (p *proc) awaitRepeat(before int, d time.Duration) {
	deadline := time.Now().Add(d)
	for p.stream.repeated() == before && time.Now().Before(deadline) && p.alive() {
		if _, err := p.read(deadline); err != nil {
			return
		}
	}
}

// pending reads what the terminal holds right now, a few reads at most,
// and returns the expected marker's frame if that brought it.
func (p *proc) pending() (frame, bool) {
	for range 4 {
		select {
		case fr := <-p.stream.done:
			return fr, true
		default:
		}
		if _, err := p.read(time.Now()); err != nil {
			break
		}
	}
	select {
	case fr := <-p.stream.done:
		return fr, true
	default:
		return frame{}, false
	}
}

// waitEnded is next once the terminal is closed: nothing more can arrive.
func (p *proc) waitEnded(ctx context.Context, deadline time.Time) (frame, event) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case fr := <-p.stream.done:
		return fr, evFrame
	case <-p.exited:
		return frame{}, evExited
	case <-ctx.Done():
		return frame{}, evCtx
	case <-t.C:
		return frame{}, evDeadline
	}
}

// wait reaps the shell and records how it ended.
func (p *proc) wait() {
	// dying is set before the shell is reaped, so that settle finds it
	// set once the shell's process is gone.
	_ = term.WaitExited(p.pid)
	p.dying.Store(true)
	err := p.cmd.Wait()
	p.status = describeExit(err)
	close(p.exited)
	p.kick()
}

// settle waits briefly for the waiter to record the shell's end when the
// shell has ended but exited is not closed yet, so a command typed right
// after the shell was killed (and reaped) is not typed into a dead
// terminal. It costs no system call.
func (p *proc) settle() {
	if !p.dying.Load() || !p.alive() {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
	}
}

// alive reports whether the shell has not ended.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// drainOutput reads, as the holder of readMu, what the shell wrote before
// it ended, for a short while.
func (p *proc) drainOutput() {
	deadline := time.Now().Add(100 * time.Millisecond)
	for {
		select {
		case <-p.readDone:
			return
		default:
		}
		if n, err := p.read(deadline); err == nil && n == 0 && !time.Now().Before(deadline) {
			return
		}
	}
}

// stop ends the shell's whole session (background jobs included): a hangup
// (the terminal closes), then SIGTERM, then SIGKILL, and removes the
// command files. It is idempotent.
func (p *proc) stop() error {
	p.stopOnce.Do(func() {
		// The reader first: closing the master waits for a read under
		// way, which the reader's Close ends.
		p.reader.Close()
		p.master.Close()
		p.stopErr = term.EndSession(p.pid, p.pid)
		t := time.NewTimer(term.KillGrace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		p.idleMu.Lock()
		p.stopped = true
		p.idleMu.Unlock()
		p.disarm()
		p.drains.Wait()
		p.cmdf.Close()
		os.RemoveAll(p.dir)
	})
	return p.stopErr
}

// describeExit says how a process ended, from its Wait error.
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exited with status 0"
}

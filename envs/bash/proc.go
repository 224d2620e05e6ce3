package bash

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/procs"
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
	fileLine    string        // "bash: FILE: line ", as bash's errors name a line of the command file
	cmdf        *os.File      // the command file, open for rewriting
	cmdLen      int           // the command file's length
	quotedFile  string        // file quoted for the shell
	line        []byte        // the line typed for the last command, reused
	noTyping    bool          // a command may have defined aliases or changed the line editor: source every command
	answered    bool          // an answer was typed to the last command
	number      int64         // the command number of the last marker that counted
	id          int64         // the id the last line that set one gave; markers carry it
	secret      string        // the session's secret, in the marker's tag
	psLen       int           // the length of PS1 as the shell set it up
	promptRead  term.ReadCall // how the shell reads a command line, once known
	promptKnown bool          // promptRead is known
	reader      *term.Reader
	stream      *stream
	group       *procs.Group // the shell and everything it started

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
	readMu      sync.Mutex
	buf         []byte         // read buffer; used by readMu's holder
	reclaimedAt time.Time      // sigReclaim last sent; used by readMu's holder
	idle        *time.Timer    // starts drain
	claiming    atomic.Bool    // a command waits to take readMu from drain
	drains      sync.WaitGroup // drain runs armed or running
	live        atomic.Int32   // the same count, readable without waiting
	idleMu      sync.Mutex     // guards idle's arming and stopped
	stopped     bool           // stop has begun: idle is not armed again

	stopOnce sync.Once
	stopErr  error
}

// startProc starts bash in dir and waits for its first marker.
func startProc(bashPath, dir string, env []string, resources procs.Limits) (*proc, error) {
	tmp, err := tempDir()
	if err != nil {
		return nil, err
	}
	secret := rand.Text()[:secretLen]
	file := filepath.Join(tmp, "c")
	init := filepath.Join(tmp, "init.sh")
	if err := os.WriteFile(init, []byte(initScript), 0o600); err != nil {
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
	group := procs.NewGroup()
	cmd.Env = append(env[:len(env):len(env)], group.Env())
	err = group.Start(cmd, func() error { return term.Start(cmd, slave) })
	tty := slave.Name()
	slave.Close()
	if err == nil && !resources.IsZero() {
		// Before the shell reads its first line: nothing runs yet.
		if err = resources.Apply(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	if err != nil {
		group.Close()
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
		fileLine:   "bash: " + file + ": line ",
		quotedFile: quote(file),
		cmdf:       cmdf,
		reader:     reader,
		number:     -1,
		secret:     secret,
		stream:     newStream(secret, cmd.Process.Pid),
		group:      group,
		exited:     make(chan struct{}),
		readDone:   make(chan struct{}),
		buf:        make([]byte, readSize),
	}
	p.idle = time.AfterFunc(time.Hour, p.drain)
	p.idle.Stop()
	p.readMu.Lock()
	go p.wait()
	p.stream.expect(p.number, p.id, envs.NewOutput(4<<10))
	// The init script learns the line that sources the command file, as
	// submit types it, from its arguments.
	if _, err := p.master.Write([]byte(initLine(init, secret, ". "+p.quotedFile))); err != nil {
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

// stop ends the shell's whole session (background jobs included): a hangup
// (the terminal closes), then SIGTERM, then SIGKILL; then whatever else the
// shell started, found in its group (processes that left the session),
// and removes the command files. It is idempotent.
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
		// What left the session (setsid, a daemon) is still in the group.
		p.stopErr = errors.Join(p.stopErr, p.group.Kill())
		p.group.Close()
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

// sigAnswered is the signal that tells the shell an answer is being typed
// to its command: 41, RTMIN+7 as a bash built with glibc names it (musl's
// SIGRTMIN differs, so init.sh traps the number). Its trap (see
// __unfold_answered in init.sh) runs once the program that reads the
// answer is done, or at once when the shell's read builtin waits; at its
// next prompt the shell then discards what was typed and not read, and
// says how much, before its marker.
const sigAnswered = syscall.Signal(41)

// signalAnswer tells the shell that an answer is about to be typed, when
// the shell catches sigAnswered: a command that reset its trap would be
// killed by it.
func (p *proc) signalAnswer() error {
	if !catches(p.pid, sigAnswered) {
		return nil
	}
	return syscall.Kill(p.pid, sigAnswered)
}

// sigReclaim is the signal whose trap has the shell take its terminal back
// from a process group that holds it while the shell waits for its next
// line (see init.sh): 42, RTMIN+8 in glibc's numbering, trapped by number.
const sigReclaim = syscall.Signal(42)

// reclaimEvery bounds how often sigReclaim is sent while the shell goes on
// reading an end of file.
const reclaimEvery = 50 * time.Millisecond

// reclaim sends sigReclaim when a process group other than the shell's
// holds the terminal: called between commands when the shell printed its
// notice of an end of file ignored (eofNotice), as its reads of its next
// line then fail for as long as that lasts, which is for good once it does
// (see init.sh), and it answers each with the notice and its prompt again;
// and by takeTerminal. A command that left the terminal's modes at VMIN 0
// has the shell print the notice too, but holding the terminal itself (see
// [Shell.fixModes]).
func (p *proc) reclaim() {
	if time.Since(p.reclaimedAt) < reclaimEvery {
		return
	}
	if !p.othersHold() {
		return
	}
	p.reclaimedAt = time.Now()
	_ = syscall.Kill(p.pid, sigReclaim)
}

// takeTerminal makes sure, before a command is typed, that the shell holds
// its terminal. A process group that took it since the last command (see
// reclaim) would have the shell never read the line, and the line's echo
// break the notices the shell prints meanwhile: the shell is signalled to
// take the terminal back, and takeTerminal waits for that, up to
// reclaimWait, reading what the shell prints.
func (p *proc) takeTerminal() {
	if !p.othersHold() {
		return
	}
	for deadline := time.Now().Add(reclaimWait); p.alive() && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		p.reclaim()
		p.pending()
		if pg, err := term.Foreground(p.master); err != nil || pg == p.pid {
			break
		}
	}
	p.pending()
}

// othersHold reports whether a process group other than the shell's holds
// its terminal, and the shell catches sigReclaim, which gives it back.
func (p *proc) othersHold() bool {
	pg, err := term.Foreground(p.master)
	return err == nil && pg > 1 && pg != p.pid && catches(p.pid, sigReclaim)
}

// reclaimWait bounds takeTerminal's wait.
const reclaimWait = time.Second

// catches reports whether process pid has a handler for sig, from the
// SigCgt mask in /proc/<pid>/status.
func catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	_, rest, ok := bytes.Cut(b, []byte("\nSigCgt:\t"))
	if !ok {
		return false
	}
	mask, _, _ := bytes.Cut(rest, []byte("\n"))
	m, err := strconv.ParseUint(string(mask), 16, 64)
	return err == nil && m&(1<<(sig-1)) != 0
}

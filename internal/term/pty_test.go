//go:build linux

package term_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/unfold-dev/unfold/internal/term"
)

// startOn starts name on a new pseudo-terminal and ends its session when
// the test ends. waited is closed once cmd.Wait returned, into *werr.
func startOn(t *testing.T, name string, args ...string) (master, slave *os.File, cmd *exec.Cmd, waited <-chan struct{}, werr *error) {
	t.Helper()
	master, slave, err := term.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(name, args...)
	if err := term.Start(cmd, slave); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	werr = new(error)
	go func() { *werr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		master.Close()
		_ = term.EndSession(cmd.Process.Pid, cmd.Process.Pid)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s still runs after EndSession", name)
		}
		slave.Close()
	})
	return master, slave, cmd, done, werr
}

// eventually polls cond until it holds or 10 seconds pass.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestFixModes(t *testing.T) {
	master, _, err := term.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	changed, err := term.FixModes(master)
	if err != nil || changed {
		t.Fatalf("FixModes after OpenPTY: got %v, %v, want false, nil (OpenPTY sets the modes)", changed, err)
	}
	// Turn echo back on through the slave's modes, as a program may, and
	// another echo flag off.
	if err := exec.Command("stty", "-F", ttyName(t, master), "echo", "opost", "-echok").Run(); err != nil {
		t.Skipf("stty: %v", err)
	}
	if changed, err := term.FixModes(master); err != nil || !changed {
		t.Errorf("FixModes after stty echo: got %v, %v, want true, nil", changed, err)
	}
	if term.EchoOff(master) {
		t.Errorf("EchoOff after FixModes: got true, want the echo flags as a fresh terminal has them")
	}
	if changed, err := term.FixModes(master); err != nil || changed {
		t.Errorf("FixModes again: got %v, %v, want false, nil", changed, err)
	}
}

// TestFixModesRead: the modes a command leaves for polling a key (no
// canonical input, VMIN 0, VTIME 0, in which a read returns at once with
// nothing) and the ones that keep ^C from interrupting (no ISIG, another
// interrupt character) are set back; InterruptKey tells the latter.
func TestFixModesRead(t *testing.T) {
	for _, c := range []struct {
		name string
		stty []string
		key  bool // ^C still interrupts
	}{
		{"poll a key", []string{"-icanon", "min", "0", "time", "0"}, true},
		{"VMIN alone", []string{"min", "0"}, true},
		{"VTIME alone", []string{"time", "5"}, true},
		{"no signals", []string{"-isig"}, false},
		{"another interrupt character", []string{"intr", "^X"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			master, _, err := term.OpenPTY()
			if err != nil {
				t.Fatal(err)
			}
			defer master.Close()
			if !term.InterruptKey(master) {
				t.Fatalf("InterruptKey after OpenPTY: got false, want true")
			}
			if err := exec.Command("stty", append([]string{"-F", ttyName(t, master)}, c.stty...)...).Run(); err != nil {
				t.Skipf("stty: %v", err)
			}
			if got := term.InterruptKey(master); got != c.key {
				t.Errorf("InterruptKey after stty %v: got %v, want %v", c.stty, got, c.key)
			}
			if changed, err := term.FixModes(master); err != nil || !changed {
				t.Errorf("FixModes after stty %v: got %v, %v, want true, nil", c.stty, changed, err)
			}
			if changed, err := term.FixModes(master); err != nil || changed {
				t.Errorf("FixModes again: got %v, %v, want false, nil", changed, err)
			}
			if !term.InterruptKey(master) {
				t.Errorf("InterruptKey after FixModes: got false, want true")
			}
			out, err := exec.Command("stty", "-F", ttyName(t, master), "-a").Output()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "min = 1; time = 0;") {
				t.Errorf("stty -a after FixModes: got %q, want min = 1; time = 0", out)
			}
		})
	}
}

// TestEchoOff: a program reading a line with echo turned off (bash's
// read -s, stty -echok) is seen; one reading with the terminal as opened,
// or a line editor in raw mode, is not.
func TestEchoOff(t *testing.T) {
	for _, c := range []struct {
		name   string
		script string
		want   bool
	}{
		{"read", "read x", false},
		{"read -s", "read -s x", true},
		{"stty -echok", "stty -echok; read x", true},
		{"raw mode", "stty raw; read x", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			master, slave, cmd, _, _ := startOn(t, "bash", "--norc", "--noprofile", "-c", c.script)
			if !eventually(func() bool { _, ok := term.ReadingTerminal(cmd.Process.Pid, slave.Name()); return ok }) {
				t.Fatalf("%s: never read the terminal", c.script)
			}
			if got := term.EchoOff(master); got != c.want {
				t.Errorf("EchoOff while %s reads: got %v, want %v", c.script, got, c.want)
			}
		})
	}
	master, _, err := term.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	if term.EchoOff(master) {
		t.Errorf("EchoOff of a terminal as OpenPTY opened it: got true, want false")
	}
}

// ttyName returns the slave's path for master, opening a fresh slave.
func ttyName(t *testing.T, master *os.File) string {
	t.Helper()
	rc, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	var errno syscall.Errno
	_ = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n)))
	})
	if errno != 0 {
		t.Fatal(errno)
	}
	return "/dev/pts/" + strconv.Itoa(int(n))
}

func TestForegroundAndReading(t *testing.T) {
	master, slave, cmd, _, _ := startOn(t, "cat")
	pid := cmd.Process.Pid
	if !eventually(func() bool { pg, err := term.Foreground(master); return err == nil && pg == pid }) {
		pg, err := term.Foreground(master)
		t.Fatalf("Foreground: got %d, %v, want the session leader %d", pg, err, pid)
	}
	var got int
	if !eventually(func() bool {
		p, ok := term.ReadingTerminal(pid, slave.Name())
		got = p
		return ok
	}) {
		t.Fatalf("ReadingTerminal(%d): got none, want cat (%d) blocked reading %s", pid, pid, slave.Name())
	}
	if got != pid {
		t.Errorf("ReadingTerminal: got %d, want %d", got, pid)
	}
	if _, w := term.TerminalReader(pid, slave.Name()); w != term.Waits {
		t.Errorf("TerminalReader of cat blocked in read: got %v, want %v (sure)", w, term.Waits)
	}
	if _, ok := term.ReadingTerminal(pid, "/dev/pts/nonexistent"); ok {
		t.Errorf("ReadingTerminal of another terminal: got true, want false")
	}
	if _, ok := term.ReadingTerminal(0, slave.Name()); ok {
		t.Errorf("ReadingTerminal(0): got true, want false")
	}
}

// TestReadingUnder: a member of a process group that is not its leader,
// and descends from the root given, is found reading the terminal; one in
// another group is not.
func TestReadingUnder(t *testing.T) {
	// sh leads the group; its child cat reads the terminal.
	_, slave, cmd, _, _ := startOn(t, "sh", "-c", "cat; sleep 100")
	pid := cmd.Process.Pid
	var got int
	if !eventually(func() bool {
		p, ok := term.ReadingTerminalUnder(pid, pid, slave.Name())
		got = p
		return ok && p != pid
	}) {
		t.Fatalf("ReadingTerminalUnder(%d): got %d, want sh's child cat", pid, got)
	}
	if want, _ := term.ReadingTerminal(pid, slave.Name()); got != want {
		t.Errorf("ReadingTerminalUnder: got %d, want %d as ReadingTerminal finds", got, want)
	}
	if p, ok := term.ReadingTerminalUnder(pid, pid+1e6, slave.Name()); ok {
		t.Errorf("another group: got %d, want none", p)
	}
}

// TestReadingLineEditor: a program waiting for a key in a line editor
// (pselect6 on descriptor 0 alone: readline in an interactive bash) is
// reading the terminal; one sleeping is not.
func TestReadingLineEditor(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	_, slave, cmd, _, _ := startOn(t, "bash", "--norc", "--noprofile", "-i")
	pid := cmd.Process.Pid
	if !eventually(func() bool { _, ok := term.ReadingTerminal(pid, slave.Name()); return ok }) {
		t.Fatalf("ReadingTerminal(%d): got none, want bash (%d) waiting in readline", pid, pid)
	}
	// Waits that are not for a key: a sleep, a poll of the terminal with a
	// timeout (bash's read -t), a select that watches nothing.
	for _, c := range []struct{ name, script string }{
		{"sleep", "sleep 100"},
		{"read with a timeout", "while :; do read -t 100 -n 1 k; done"},
		{"select on nothing", "exec python3 -c 'import select, time\nwhile True: select.select([], [], [], 100)'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.script, "python3") {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("python3 is not installed")
				}
			}
			_, slave, cmd, _, _ := startOn(t, "bash", "--norc", "--noprofile", "-c", c.script)
			time.Sleep(300 * time.Millisecond)
			if pid, ok := term.ReadingTerminal(cmd.Process.Pid, slave.Name()); ok {
				t.Errorf("ReadingTerminal: got %d, want none", pid)
			}
		})
	}
}

func TestInputQueued(t *testing.T) {
	master, slave, _, _, _ := startOn(t, "sleep", "100")
	if n, err := term.InputQueued(slave); err != nil || n != 0 {
		t.Fatalf("before typing: got %d, %v, want 0, nil", n, err)
	}
	if _, err := master.Write([]byte("abc\n")); err != nil {
		t.Fatal(err)
	}
	var n int
	if !eventually(func() bool { n, _ = term.InputQueued(slave); return n == 4 }) {
		t.Errorf("after typing abc and a newline to a program that does not read: got %d, want 4", n)
	}
}

func TestFlushInput(t *testing.T) {
	master, slave, _, _, _ := startOn(t, "sleep", "100")
	if _, err := master.Write([]byte("abc\n")); err != nil {
		t.Fatal(err)
	}
	var n int
	if !eventually(func() bool { n, _ = term.InputQueued(slave); return n == 4 }) {
		t.Fatalf("after typing abc and a newline: got %d queued, want 4", n)
	}
	if err := term.FlushInput(slave.Name()); err != nil {
		t.Fatal(err)
	}
	if n, err := term.InputQueued(slave); err != nil || n != 0 {
		t.Errorf("after FlushInput: got %d queued, %v, want 0, nil", n, err)
	}
	if err := term.FlushInput(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("FlushInput of a missing terminal: got %v, want an error naming it", err)
	}
}

func TestEndSession(t *testing.T) {
	master, _, cmd, waited, _ := startOn(t, "sh", "-c", "trap '' HUP TERM; sleep 100 & sleep 100")
	pid := cmd.Process.Pid
	master.Close()
	if err := term.EndSession(pid, pid); err != nil {
		t.Fatalf("EndSession: got %v, want nil", err)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the session leader still runs after EndSession")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("process %d: still there after EndSession and Wait", pid)
	}
}

func TestSignalGroup(t *testing.T) {
	_, _, cmd, waited, werr := startOn(t, "sleep", "100")
	term.SignalGroup(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-waited:
		err := *werr
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("got %v, want killed by SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sleep still runs after SIGTERM to its group")
	}
}

// TestBlockedRead: a process blocked reading its input shows the read's
// descriptor and a count; the same place reads the same way each time,
// and a sleeping process is in no read.
func TestBlockedRead(t *testing.T) {
	master, _, cmd, _, _ := startOn(t, "cat")
	pid := cmd.Process.Pid
	var first term.ReadCall
	if !eventually(func() bool {
		var ok bool
		first, ok = term.BlockedRead(pid)
		return ok
	}) {
		t.Fatalf("BlockedRead(cat): got none, want cat blocked reading descriptor 0")
	}
	if first.FD != 0 || first.Count == 0 || first.Buf == 0 {
		t.Errorf("BlockedRead(cat): got %+v, want descriptor 0, a buffer and a count", first)
	}
	if _, err := master.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := master.Read(buf); err != nil {
		t.Fatal(err)
	}
	var again term.ReadCall
	if !eventually(func() bool {
		var ok bool
		again, ok = term.BlockedRead(pid)
		return ok
	}) || again != first {
		t.Errorf("BlockedRead after a line: got %+v, want %+v again", again, first)
	}
	sleeper := exec.Command("sleep", "100")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	time.Sleep(50 * time.Millisecond)
	if rc, ok := term.BlockedRead(sleeper.Process.Pid); ok {
		t.Errorf("BlockedRead(sleep): got %+v, want none", rc)
	}
	if rc, ok := term.BlockedRead(1 << 30); ok {
		t.Errorf("BlockedRead(no such process): got %+v, want none", rc)
	}
}

// TestReadingEventLoop: a program that waits for the terminal in an event
// loop (poll, ppoll, epoll_wait or epoll_pwait with the terminal among the
// descriptors it waits to read: node's readline and process.stdin, Python's
// asyncio and prompt_toolkit) may be reading the terminal (term.MayWait: it
// may also only forward it, as script does); one whose loop waits on a
// socket or a pipe alone (a server) is not. The terminal is known by its
// file, not by the descriptor it was added by, which may have been closed
// and reused since.
func TestReadingEventLoop(t *testing.T) {
	const pyWait = "import select, os, sys\n"
	for _, c := range []struct {
		name string
		args []string
		want term.Wait
	}{
		{"node readline", []string{"node", "-e", "require('readline').createInterface({input: process.stdin, output: process.stdout}).question('Name? ', a => process.exit(0))"}, term.MayWait},
		{"node stdin data", []string{"node", "-e", "process.stdin.once('data', () => process.exit(0))"}, term.MayWait},
		{"node server", []string{"node", "-e", "require('net').createServer().listen(0, '127.0.0.1')"}, term.NotWaiting},
		{"node timer", []string{"node", "-e", "setInterval(() => {}, 100000)"}, term.NotWaiting},
		{"python poll", []string{"python3", "-c", pyWait + "p = select.poll(); p.register(0, select.POLLIN); p.poll()"}, term.MayWait},
		{"python poll with timeout", []string{"python3", "-c", pyWait + "p = select.poll(); p.register(0, select.POLLIN)\nwhile True: p.poll(100000)"}, term.MayWait},
		{"python poll on a pipe", []string{"python3", "-c", pyWait + "r, w = os.pipe(); p = select.poll(); p.register(r, select.POLLIN); p.poll()"}, term.NotWaiting},
		{"python poll for urgent data", []string{"python3", "-c", pyWait + "r, w = os.pipe(); p = select.poll(); p.register(0, select.POLLPRI); p.register(r, select.POLLIN); p.poll()"}, term.NotWaiting},
		{"python epoll", []string{"python3", "-c", pyWait + "e = select.epoll(); e.register(0, select.EPOLLIN); e.poll()"}, term.MayWait},
		{"python epoll on a pipe", []string{"python3", "-c", pyWait + "r, w = os.pipe(); e = select.epoll(); e.register(r, select.EPOLLIN); e.poll()"}, term.NotWaiting},
		{"python epoll, its descriptor reused for a pipe", []string{"python3", "-c", pyWait + "fd = os.dup(0); e = select.epoll(); e.register(fd, select.EPOLLIN); r, w = os.pipe(); os.dup2(r, fd); e.poll()"}, term.MayWait},
		{"python epoll on a pipe, its descriptor reused for the terminal", []string{"python3", "-c", pyWait + "r, w = os.pipe(); keep = os.dup(r); e = select.epoll(); e.register(r, select.EPOLLIN); os.dup2(0, r); e.poll()"}, term.NotWaiting},
		{"python asyncio stdin", []string{"python3", "-c", "import asyncio, sys\nasync def main():\n    loop = asyncio.get_running_loop(); f = loop.create_future(); loop.add_reader(0, f.set_result, None); await f\nasyncio.run(main())"}, term.MayWait},
		{"prompt_toolkit", []string{"python3", "-c", "from prompt_toolkit import prompt; prompt('Name? ')"}, term.MayWait},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.args[0]); err != nil {
				t.Skipf("%s is not installed", c.args[0])
			}
			if c.name == "prompt_toolkit" && exec.Command("python3", "-c", "import prompt_toolkit").Run() != nil {
				t.Skip("prompt_toolkit is not installed")
			}
			_, slave, cmd, _, _ := startOn(t, c.args[0], c.args[1:]...)
			pid := cmd.Process.Pid
			// Wait until the program sleeps in its event loop: from then on
			// it stays in that wait.
			if !eventually(func() bool { return inEventLoop(pid) }) {
				data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
				t.Fatalf("%s never waited in poll or epoll: /proc/%d/syscall = %q", c.name, pid, data)
			}
			if _, got := term.TerminalReader(pid, slave.Name()); got != c.want {
				t.Errorf("TerminalReader while %s waits: got %v, want %v", c.name, got, c.want)
			}
			if _, got := term.ReadingTerminal(pid, slave.Name()); got != (c.want != term.NotWaiting) {
				t.Errorf("ReadingTerminal while %s waits: got %v, want %v", c.name, got, !got)
			}
		})
	}
}

// inEventLoop reports whether pid is blocked in poll, ppoll, epoll_wait
// or epoll_pwait.
func inEventLoop(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return false
	}
	nr, err := strconv.Atoi(f[0])
	return err == nil && term.EventLoopCall(nr)
}

// TestEpollInfoBounded: of an epoll instance's fdinfo only the first
// term.EpollInfoCap bytes are read, so that a loop watching many
// descriptors (a server) costs a bounded look; a terminal listed beyond
// them is not counted.
func TestEpollInfoBounded(t *testing.T) {
	const tty = "tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:1a\n"
	var many strings.Builder
	for i := 5; many.Len() <= term.EpollInfoCap; i++ {
		many.WriteString("tfd: " + strconv.Itoa(i) + " events: 19 data: 0  pos:0 ino:" + strconv.FormatInt(int64(0x4000+i), 16) + " sdev:e\n")
	}
	for _, c := range []struct {
		name, info string
		dev        uint64
		want       bool
	}{
		{"terminal first", "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n" + tty + many.String(), 0x1a, true},
		{"terminal beyond the cap", many.String() + tty, 0x1a, false},
		{"terminal for writing only", "tfd: 0 events: 4 data: 0  pos:0 ino:3 sdev:1a\n", 0x1a, false},
		{"another file", "tfd: 0 events: 19 data: 0  pos:0 ino:3 sdev:1b\n", 0x1a, false},
		{"line cut short", "tfd: 0 events: 19 data: 0  pos:0 ino:3 sdev:1", 0x1, false},
		{"line whole", "tfd: 0 events: 19 data: 0  pos:0 ino:3 sdev:1\n", 0x1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := term.EpollWatches(strings.NewReader(c.info), 3, c.dev); got != c.want {
				t.Errorf("EpollWatches: got %v, want %v", got, c.want)
			}
		})
	}
}

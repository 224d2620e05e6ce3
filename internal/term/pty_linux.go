//go:build linux

package term

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Supported reports whether this platform has the terminal helpers: they
// read process state from /proc, which only Linux has.
const Supported = true

// OpenPTY opens a pseudo-terminal of [Rows] by [Cols]. The master is
// non-blocking and goes through the runtime poller, so closing it ends a
// pending Read (a blocking read would keep Close waiting forever) and read
// deadlines work. The slave has the modes [FixModes] sets.
func OpenPTY() (master, slave *os.File, err error) {
	return openPTY(true)
}

// OpenDirect opens a pseudo-terminal like [OpenPTY] whose master is read
// through the returned [Reader] rather than the runtime poller: the master
// is a plain blocking file, for writes and for the functions of this
// package that take a master, and is read only with r. Nothing then wakes
// the runtime's poller when the terminal has output, and a reader waiting
// for a reply is woken directly by the kernel. Close r before the master.
func OpenDirect() (master *os.File, r *Reader, slave *os.File, err error) {
	master, slave, err = openPTY(false)
	if err != nil {
		return nil, nil, nil, err
	}
	if r, err = newReader(master); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, nil, err
	}
	return master, r, slave, nil
}

// openPTY opens a pseudo-terminal; its master is on the runtime poller
// when pollable.
func openPTY(pollable bool) (master, slave *os.File, err error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	// pty.Open left the master blocking (it called Fd) but registered with
	// the poller. Wrap a close-on-exec duplicate instead: non-blocking,
	// which os.NewFile then registers with the poller, or blocking, which
	// it leaves alone.
	fd := int(m.Fd())
	if err := syscall.SetNonblock(fd, pollable); err != nil {
		m.Close()
		s.Close()
		return nil, nil, err
	}
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	m.Close()
	if errno != 0 {
		s.Close()
		return nil, nil, errno
	}
	master = os.NewFile(nfd, "/dev/ptmx")
	if err := SetSize(master, Size{Rows: Rows, Cols: Cols}); err != nil {
		master.Close()
		s.Close()
		return nil, nil, err
	}
	if _, err := FixModes(master); err != nil {
		master.Close()
		s.Close()
		return nil, nil, err
	}
	return master, s, nil
}

// GetSize reads the size of the terminal of master.
func GetSize(master *os.File) (Size, error) {
	var ws pty.Winsize
	if err := ioctl(master, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); err != nil {
		return Size{}, err
	}
	return Size{Rows: ws.Rows, Cols: ws.Cols}, nil
}

// SetSize sets the size of the terminal of master, to put back one a
// program changed (stty cols 20): later programs would format their output
// for the size it left. The kernel signals the terminal's programs
// (SIGWINCH) only when the size changes.
func SetSize(master *os.File, s Size) error {
	ws := pty.Winsize{Rows: s.Rows, Cols: s.Cols}
	return ioctl(master, syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws)))
}

// ioctl runs an ioctl on f without switching it to blocking mode (as Fd
// would).
func ioctl(f *os.File, req, arg uintptr) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, arg)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// FixModes sets the modes the environments rely on (no echo, no output
// processing so a newline stays a newline, canonical input, signals, ^C as
// the interrupt character, the echo flags [EchoOff] looks at as a fresh
// terminal has them, and VMIN 1 and VTIME 0, with which a read waits for
// input, should a program turn canonical input off again) on the terminal
// of master, when a program left them changed. On a pty master the mode ioctls act on the slave. It
// reports whether anything had to change.
func FixModes(master *os.File) (bool, error) {
	var t syscall.Termios
	if err := ioctl(master, syscall.TCGETS, uintptr(unsafe.Pointer(&t))); err != nil {
		return false, err
	}
	want := t
	want.Lflag &^= syscall.ECHO | syscall.ECHONL
	// The other echo flags as a fresh terminal has them, so that EchoOff
	// sees the next program that turns echo off.
	want.Lflag |= syscall.ICANON | syscall.ISIG | echoMarks
	want.Oflag &^= syscall.OPOST
	want.Iflag |= syscall.ICRNL
	// The line editor's characters as a fresh terminal has them: a command
	// such as `stty erase _` would otherwise garble every line typed after.
	for _, cc := range editChars {
		want.Cc[cc.index] = cc.value
	}
	if want == t {
		return false, nil
	}
	return true, ioctl(master, syscall.TCSETS, uintptr(unsafe.Pointer(&want)))
}

// echoMarks are the echo flags a fresh terminal has set and [FixModes]
// leaves alone. Echo itself is off on these terminals, so a program that
// turns echo off to read a secret shows only in these: bash's read -s
// clears ECHOK, for one.
const echoMarks = syscall.ECHOE | syscall.ECHOK | unix.ECHOKE | unix.ECHOCTL

// EchoOff reports whether a program turned the echo of master's terminal
// off to read a line, as programs do to read a password: the terminal is
// in line mode and echo flags that [OpenPTY] left set are cleared. A
// program that clears ECHO alone (already off here) is not seen, and a
// line editor in raw mode is not counted.
func EchoOff(master *os.File) bool {
	var t syscall.Termios
	if err := ioctl(master, syscall.TCGETS, uintptr(unsafe.Pointer(&t))); err != nil {
		return false
	}
	return t.Lflag&syscall.ICANON != 0 && t.Lflag&echoMarks != echoMarks
}

// editChars are the line editor's characters as a fresh terminal has them.
var editChars = [...]struct {
	index int
	value uint8
}{
	{syscall.VINTR, 3}, {syscall.VQUIT, 0x1c}, {syscall.VERASE, 0x7f}, {syscall.VKILL, 0x15},
	{syscall.VEOF, 4}, {syscall.VEOL, 0}, {syscall.VEOL2, 0}, {syscall.VWERASE, 0x17},
	{syscall.VLNEXT, 0x16}, {syscall.VREPRINT, 0x12}, {syscall.VSUSP, 0x1a},
	{syscall.VMIN, 1}, {syscall.VTIME, 0},
}

// InterruptKey reports whether ^C typed to master's terminal sends SIGINT
// to its foreground process group: signals are on (ISIG) and the interrupt
// character is ^C. A program may have changed either (stty -isig, stty intr
// ^X, a raw mode left behind).
func InterruptKey(master *os.File) bool {
	var t syscall.Termios
	if err := ioctl(master, syscall.TCGETS, uintptr(unsafe.Pointer(&t))); err != nil {
		return false
	}
	return t.Lflag&syscall.ISIG != 0 && t.Cc[syscall.VINTR] == 3
}

// Foreground returns the foreground process group of master's terminal.
func Foreground(master *os.File) (int, error) {
	var pgid int32
	if err := ioctl(master, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgid))); err != nil {
		return 0, err
	}
	return int(pgid), nil
}

// InputQueued returns how many bytes typed to the terminal of slave the
// program has not read yet.
func InputQueued(slave *os.File) (int, error) {
	var n int32
	if err := ioctl(slave, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Start starts cmd as a session leader with slave as its controlling
// terminal and standard streams.
// Attributes cmd.SysProcAttr already has (a cgroup to start in, say) are
// kept.
func Start(cmd *exec.Cmd, slave *os.File) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
	cmd.SysProcAttr = &attr
	return cmd.Start()
}

// FlushInput discards what was typed to the terminal named tty (the
// slave's path) and not read yet, as Ctrl-C does. It opens the terminal
// for the moment (without making it this process's controlling terminal).
func FlushInput(tty string) error {
	fd, err := syscall.Open(tty, syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: tty, Err: err}
	}
	defer syscall.Close(fd)
	if err := unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return os.NewSyscallError("ioctl TCFLSH", err)
	}
	return nil
}

// WaitExited blocks until pid, a child of this process, has ended, and
// leaves it unreaped (waitid with WNOWAIT): its exec.Cmd's Wait still
// reaps it and gets its status. Telling others of the end in between means
// that whoever sees pid gone finds them told.
func WaitExited(pid int) error {
	const pPID, wNowait = 1, 0x1000000
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNowait, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return os.NewSyscallError("waitid", errno)
	}
}

// SignalGroup sends sig to process group pgid; groups 0 and 1 (which
// would mean the caller's own group or init) are left alone.
func SignalGroup(pgid int, sig syscall.Signal) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, sig)
	}
}

// Ladder timing for ending a session: how long each signal gets.
const (
	hangupGrace = 500 * time.Millisecond
	termGrace   = time.Second
	// KillGrace is how long processes get to die after SIGKILL.
	KillGrace = 2 * time.Second
)

// EndSession ends every process of session sid: they have had a hangup
// (the caller closed the terminal); whatever is left gets SIGTERM, then
// SIGKILL. Zombies that are this process's children (when it is a
// subreaper, orphans are) are reaped, except leader, which its exec.Cmd
// waits for. It returns an error naming processes that survived.
func EndSession(sid, leader int) error {
	members := func() []procStat {
		return processes(func(st procStat) bool { return st.session == sid })
	}
	self := os.Getpid()
	// settle reaps what it can and returns the members still running.
	settle := func() []procStat {
		var alive []procStat
		for _, st := range members() {
			if st.state == 'Z' || st.state == 'X' {
				if st.ppid == self && st.pid != leader {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(st.pid, &ws, syscall.WNOHANG, nil)
				}
				continue
			}
			alive = append(alive, st)
		}
		return alive
	}
	wait := func(d time.Duration) []procStat {
		deadline := time.Now().Add(d)
		for {
			alive := settle()
			if len(alive) == 0 || time.Now().After(deadline) {
				return alive
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	alive := wait(hangupGrace)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if len(alive) == 0 {
			return nil
		}
		for _, st := range alive {
			_ = syscall.Kill(st.pid, sig)
		}
		grace := termGrace
		if sig == syscall.SIGKILL {
			grace = KillGrace
		}
		alive = wait(grace)
	}
	if len(alive) > 0 {
		pids := make([]string, len(alive))
		for i, st := range alive {
			pids[i] = strconv.Itoa(st.pid)
		}
		return fmt.Errorf("processes %s survived SIGKILL", strings.Join(pids, ", "))
	}
	return nil
}

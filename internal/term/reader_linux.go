//go:build linux

package term

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Reader reads the master of a terminal from [OpenDirect] in the calling
// goroutine: it blocks in ppoll(2) on the master and on an eventfd that
// [Reader.Wake] signals. A reply that comes a few microseconds after a
// command was typed then costs one wake-up of the reading thread, with no
// hand-off through the runtime's poller and scheduler, or none while the
// reader busy-waits (see [Reader.SpinUntil]). One goroutine reads at a
// time; Wake and Close may be called from any goroutine.
type Reader struct {
	master  *os.File
	wake    *os.File // an eventfd, blocking and off the runtime poller
	closing atomic.Bool

	// Set once, so that a Read allocates nothing: the raw connections,
	// the functions they run, and the arguments and results those pass
	// through (one Read at a time).
	mc, wc   syscall.RawConn
	onMaster func(uintptr)
	onWake   func(uintptr)
	mfd      uintptr
	p        []byte
	deadline time.Time
	n        int
	err      error

	spinUntil time.Time // set by SpinUntil, between Reads
	looks     uint64    // looks taken while spinning, for tests
}

func newReader(master *os.File) (*Reader, error) {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("eventfd2", errno)
	}
	r := &Reader{master: master, wake: os.NewFile(fd, "eventfd")}
	var err error
	if r.mc, err = master.SyscallConn(); err == nil {
		r.wc, err = r.wake.SyscallConn()
	}
	if err != nil {
		r.wake.Close()
		return nil, err
	}
	r.onMaster = func(mfd uintptr) {
		r.mfd = mfd
		if err := r.wc.Control(r.onWake); err != nil && r.err == nil {
			r.err = err
		}
	}
	r.onWake = func(wfd uintptr) { r.n, r.err = r.wait(r.mfd, wfd, r.p, r.deadline) }
	return r, nil
}

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1

// errHangup is a read of nothing: every program closed the terminal.
var errHangup = errors.New("term: the terminal was hung up")

// Read waits until the terminal has output, [Reader.Wake] is called, or
// deadline passes (a zero deadline never passes), and reads the output
// into p. It returns 0 and no error when woken or at the deadline, so that
// the caller looks at what it waits for and calls again. It returns an
// error once every program closed the terminal, and [os.ErrClosed] after
// Close.
func (r *Reader) Read(p []byte, deadline time.Time) (int, error) {
	if r.closing.Load() {
		return 0, os.ErrClosed
	}
	r.p, r.deadline, r.n, r.err = p, deadline, 0, nil
	// Control keeps both descriptors open (a Close waits to close them)
	// until the wait is over.
	cerr := r.mc.Control(r.onMaster)
	n, err := r.n, r.err
	r.p = nil
	if cerr != nil {
		return 0, cerr
	}
	if err == nil && n == 0 && r.closing.Load() {
		err = os.ErrClosed
	}
	return n, err
}

// SpinUntil has the reads that wait before t busy-wait instead of
// sleeping in the kernel: they look at the terminal again and again
// without blocking, and sleep only once t passes. A reply that comes
// within microseconds, such as a quick command's prompt, then finds the
// reading thread running, which saves the wake-up of a sleeping one when
// the machine has a processor to spare; on a busy one the spin only
// takes processor time. The cost is that time, up to t, for a reply that
// comes later. A zero t, or one past, ends spinning. It must not be
// called while a Read is under way.
func (r *Reader) SpinUntil(t time.Time) { r.spinUntil = t }

func (r *Reader) wait(mfd, wfd uintptr, p []byte, deadline time.Time) (int, error) {
	fds := [2]pollFd{{fd: int32(mfd), events: pollIn}, {fd: int32(wfd), events: pollIn}}
	ready, errno := r.spin(&fds, deadline)
	if !ready && errno == 0 {
		var ts *syscall.Timespec
		if !deadline.IsZero() {
			t := syscall.NsecToTimespec(max(0, int64(time.Until(deadline))))
			ts = &t
		}
		_, _, errno = syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	}
	switch errno {
	case 0:
	case syscall.EINTR:
		return 0, nil
	default:
		return 0, os.NewSyscallError("ppoll", errno)
	}
	if fds[1].revents != 0 && !r.closing.Load() {
		// Take the wake-up. Once closing, it stays, so that every
		// later wait ends at once.
		var b [8]byte
		_, _, _ = syscall.Syscall(syscall.SYS_READ, wfd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	}
	if fds[0].revents == 0 || len(p) == 0 {
		return 0, nil
	}
	for {
		n, _, errno := syscall.Syscall(syscall.SYS_READ, mfd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return 0, nil
		case errno != 0:
			return 0, os.NewSyscallError("read", errno)
		case n == 0:
			return 0, errHangup
		}
		return int(n), nil
	}
}

// spin polls fds without blocking until one is ready or spinUntil or
// deadline passes, and reports whether one is ready, or the error of the
// look that failed. It does not yield the processor between looks: a
// thread that yields to a busy program can lose a whole time slice,
// milliseconds, where one that keeps running or sleeps does not.
func (r *Reader) spin(fds *[2]pollFd, deadline time.Time) (bool, syscall.Errno) {
	if r.spinUntil.IsZero() {
		return false, 0
	}
	var zero syscall.Timespec
	for {
		now := time.Now()
		if !now.Before(r.spinUntil) || !deadline.IsZero() && !now.Before(deadline) {
			return false, 0
		}
		// This ppoll does not block, so the scheduler need not be told.
		r.looks++
		n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
		switch {
		case errno == 0 && n > 0:
			return true, 0
		case errno != 0 && errno != syscall.EINTR:
			return false, errno
		}
	}
}

// Wake ends a wait in Read, or the next one if none is under way, so that
// the reader looks at what it waits for again.
func (r *Reader) Wake() {
	one := [8]byte{1}
	_, _ = r.wake.Write(one[:])
}

// Close ends a wait in Read and makes every later Read return
// [os.ErrClosed]. It is idempotent.
func (r *Reader) Close() error {
	if r.closing.Swap(true) {
		return nil
	}
	r.Wake()
	return r.wake.Close()
}

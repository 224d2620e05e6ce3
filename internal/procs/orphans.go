//go:build linux

package procs

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// How orphans are told from the children this process waits for
//
// A subreaper's children are of two kinds: those it started, each waited
// for by an exec.Cmd or os.Process somewhere in the program (the
// environments' programs, upstream MCP servers started by the MCP SDK, any
// library's), and the orphans re-parented to it. Reaping one of the first
// kind makes its Wait fail with ECHILD and loses its exit status, so the
// reaper must never touch them, and it cannot know every place that starts
// one. The kernel tells them apart for it: on Linux os.StartProcess creates
// each child with a pidfd (clone with CLONE_PIDFD, installed in this
// process's file table before the child runs) and keeps it open until its
// Wait has reaped the child. A zombie child that no pidfd of this process
// refers to is therefore one nobody waits for: an orphan, or a child whose
// os.Process was released. The reaper opens its own pidfd to the zombie
// first, so that the process cannot be reaped and its number reused while
// it looks, then reads the "Pid:" line of every other descriptor in
// /proc/self/fdinfo, and reaps through its pidfd only when none names the
// zombie. AdoptOrphans checks once that os holds pidfds here (a Go runtime
// or a kernel without them would make every child look like an orphan)
// and refuses otherwise.

// errNoPidfds is why AdoptOrphans refuses where children are not held by
// pidfds.
var errNoPidfds = errors.New("procs: adopt orphans: this system does not give os.Process a pidfd, " +
	"so orphans cannot be told from the children the program waits for (needs Linux 5.4 or later)")

// adoption is the process-wide subreaper state that AdoptOrphans shares
// among its callers.
var adoption struct {
	// mu guards the fields below.
	mu    sync.Mutex
	users int           // callers that have not stopped yet
	done  chan struct{} // closed to end the reaper
	gone  chan struct{} // closed when the reaper has ended
}

// AdoptOrphans makes this process the reaper of the orphans its
// descendants leave (Linux PR_SET_CHILD_SUBREAPER) and reaps each one when
// it ends, on SIGCHLD, until stop is called. Without it, the processes a
// dead environment program left behind are re-parented to PID 1, and where
// PID 1 does not reap (as in many containers) each of them stays a zombie
// once it ends, holding its process ID for the life of the machine.
//
// Only zombie children that no os.Process of this program holds are
// reaped (see the comment at the top of orphans.go), so exec.Cmd.Wait
// keeps working for every child the program started, wherever it was
// started. A child started without an os.Process (syscall.ForkExec, or a
// Process released) is reaped like an orphan: wait for such children
// before adopting, or start them through os/exec. Calls nest: the last
// stop turns the subreaper off. Elsewhere
// than on Linux it returns an error wrapping [errors.ErrUnsupported].
func AdoptOrphans() (stop func(), err error) {
	adoption.mu.Lock()
	defer adoption.mu.Unlock()
	if adoption.users == 0 {
		if !pidfdsHeld() {
			return nil, errNoPidfds
		}
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("procs: adopt orphans: %w", err)
		}
		done, gone := make(chan struct{}), make(chan struct{})
		adoption.done, adoption.gone = done, gone
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGCHLD)
		go func() {
			defer close(gone)
			defer signal.Stop(sigs)
			reapOrphans()
			for {
				select {
				case <-sigs:
					// Signals coalesce: each pass reaps every zombie.
					reapOrphans()
				case <-done:
					return
				}
			}
		}()
	}
	adoption.users++
	var once sync.Once
	return func() { once.Do(unadopt) }, nil
}

// unadopt is one caller's stop: the last one ends the reaper and the
// subreaper role.
func unadopt() {
	adoption.mu.Lock()
	defer adoption.mu.Unlock()
	adoption.users--
	if adoption.users > 0 {
		return
	}
	close(adoption.done)
	<-adoption.gone
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	reapOrphans()
}

// pidfdsHeld reports whether os holds a pidfd for the processes it finds
// and starts (both go through the same check in os), by finding this
// process and looking for the descriptor.
var pidfdsHeld = sync.OnceValue(func() bool {
	self := os.Getpid()
	p, err := os.FindProcess(self)
	if err != nil {
		return false
	}
	defer p.Release()
	return heldPidfds(nil)[self]
})

// reapOrphans reaps this process's zombie children that no os.Process
// holds.
func reapOrphans() {
	// A cheap look first: WNOWAIT leaves the zombie it finds, and Linux
	// sets si_signo to 0 when there is none.
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil || info.Signo == 0 {
		return
	}
	self := os.Getpid()
	var zombies []int
	for _, st := range stats() {
		if st.ppid == self && st.state == 'Z' {
			zombies = append(zombies, st.pid)
		}
	}
	reapUnheld(zombies)
}

// reapMu makes reaping passes take turns: a pass counts the pidfds
// another pass opened as held, so two at once would each leave the
// zombie to the other, and it would stay until the next SIGCHLD.
var reapMu sync.Mutex

// reapUnheld reaps those of pids that are zombie children of this process
// and that no pidfd of it, other than the ones opened here, refers to.
func reapUnheld(pids []int) {
	reapMu.Lock()
	defer reapMu.Unlock()
	own := make(map[int]int, len(pids)) // pid to the pidfd opened here
	defer func() {
		for _, fd := range own {
			unix.Close(fd)
		}
	}()
	mine := make(map[int]bool, len(pids))
	for _, pid := range pids {
		// Opened before looking, so that the zombie, and with it its
		// number, stays until the look is over.
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		own[pid], mine[fd] = fd, true
	}
	if len(own) == 0 {
		return
	}
	held := heldPidfds(mine)
	for pid, fd := range own {
		if held[pid] {
			continue
		}
		var info unix.Siginfo
		// WNOHANG: a live child or one that is not this process's is
		// left alone.
		_ = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
	}
}

// heldPidfds returns the processes that this process's pidfds refer to,
// leaving out the descriptors in skip.
func heldPidfds(skip map[int]bool) map[int]bool {
	d, err := os.Open("/proc/self/fdinfo")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	held := make(map[int]bool)
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || skip[fd] {
			continue
		}
		data, err := os.ReadFile("/proc/self/fdinfo/" + n)
		if err != nil {
			continue
		}
		// Only a pidfd's fdinfo has a "Pid:" line; it says -1 once the
		// process is reaped.
		for line := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Pid:"); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 0 {
					held[pid] = true
				}
				break
			}
		}
	}
	return held
}

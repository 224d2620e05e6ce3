//go:build linux

package procs

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startOrphan starts a shell that starts `sleep secs` in the background
// and exits, and returns the sleep's process ID once the shell is gone:
// the sleep is then an orphan, this process's child when it is a
// subreaper.
func startOrphan(t *testing.T, secs string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep "+secs+" >/dev/null 2>&1 & echo $!")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the shell said %q, want a process id", out)
	}
	return pid
}

// waitState polls until process pid is in a state want accepts; it
// returns the last state read ('-' once the process is gone).
func waitState(pid int, want func(state byte) bool) byte {
	deadline := time.Now().Add(30 * time.Second)
	for {
		state := byte('-')
		if st, ok := readStat(pid); ok {
			state = st.state
		}
		if want(state) || time.Now().After(deadline) {
			return state
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAdoptOrphansReaps: an orphan that ends by itself while this process
// adopts orphans is reaped, not left a zombie; after stop, this process
// no longer adopts them.
func TestAdoptOrphansReaps(t *testing.T) {
	stop, err := AdoptOrphans()
	if err != nil {
		t.Fatal(err)
	}
	pid := startOrphan(t, "0.2")
	if got := waitState(pid, func(s byte) bool { return s == '-' }); got != '-' {
		t.Errorf("the orphan %d is in state %c; want it ended and reaped", pid, got)
	}
	stop()
	pid = startOrphan(t, "1000")
	defer func() { _ = exec.Command("kill", strconv.Itoa(pid)).Run() }()
	if st, ok := readStat(pid); !ok || st.ppid == os.Getpid() {
		t.Errorf("after stop the orphan %d came to this process (stat %+v, %v); want it to go elsewhere", pid, st, ok)
	}
}

// TestReapLeavesWaitedChildren: a child an exec.Cmd started keeps its exit
// status when a reaping pass meets it as a zombie before its Wait, while
// an orphan met in the same pass is reaped.
func TestReapLeavesWaitedChildren(t *testing.T) {
	stop, err := AdoptOrphans()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for i := range 20 {
		orphan := startOrphan(t, "0")
		cmd := exec.Command("sh", "-c", "exit 7")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if got := waitState(cmd.Process.Pid, func(s byte) bool { return s == 'Z' }); got != 'Z' {
			t.Fatalf("the child is in state %c; want a zombie", got)
		}
		reapOrphans()
		var exit *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 7 {
			t.Fatalf("round %d: Wait = %v; want exit status 7", i, err)
		}
		if got := waitState(orphan, func(s byte) bool { return s == '-' }); got != '-' {
			t.Fatalf("round %d: the orphan %d is in state %c; want it reaped", i, orphan, got)
		}
	}
}

// TestReapManyChildren: children started and waited for from many
// goroutines while orphans end and are reaped all the time never lose
// their exit status.
func TestReapManyChildren(t *testing.T) {
	stop, err := AdoptOrphans()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 25 {
				cmd := exec.Command("sh", "-c", "sleep 0 & exit 3")
				var exit *exec.ExitError
				if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("Run = %v; want exit status 3", err)
		}
	}
	// The background sleeps were orphans: none stays a zombie.
	self := strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := zombieChildren(t, self)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d zombie children left; want none", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zombieChildren counts the zombie children of process self, by ps.
func zombieChildren(t *testing.T, self string) int {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "ppid=,stat=").Output()
	if err != nil {
		t.Skip("ps is not available:", err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == self && strings.HasPrefix(f[1], "Z") {
			n++
		}
	}
	return n
}

//go:build linux

package procs

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDieWithParentOutlivesStartingThread: a process set up with
// DieWithParent and started from a goroutine whose thread then ends (a
// goroutine locked to its thread that returns) keeps running: the kernel
// sends the parent-death signal when the thread that forked the child
// ends, so Start forks it from a thread that lives as long as the process.
func TestDieWithParentOutlivesStartingThread(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = DieWithParent(nil)
	g := NewGroup()
	t.Cleanup(func() {
		_ = g.Kill()
		g.Close()
		_ = cmd.Wait()
	})
	type started struct {
		tid int
		err error
	}
	done := make(chan started)
	start := func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == os.Getpid() {
			// The main thread is never ended (Go parks it): try another.
			done <- started{tid: -1}
			return
		}
		done <- started{unix.Gettid(), g.Start(cmd, cmd.Start)}
	}
	var s started
	for s.tid <= 0 {
		go start()
		s = <-done
	}
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Skip("the starting goroutine's thread did not end")
		}
	}
	// The signal, had it come, came as the thread ended; the child may
	// take a moment to die of it.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if !Alive(cmd.Process.Pid) {
			t.Fatal("the child died when the thread that started it ended, want it to run until this process dies")
		}
	}
}

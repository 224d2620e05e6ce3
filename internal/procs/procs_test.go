//go:build linux

package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillFindsEscapees: a program's children that call setsid, and ones
// whose parent exited (re-parented away), are members and end with Kill,
// with a cgroup and without one (found by their mark and their parents).
func TestKillFindsEscapees(t *testing.T) {
	for _, c := range []struct {
		name     string
		cgroup   bool
		clearEnv bool // the escapee clears its environment: only a cgroup finds it
	}{
		{"cgroup", true, false},
		{"cgroup, environment cleared", true, true},
		{"scan", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewGroup()
			defer g.Close()
			if c.cgroup && g.Cgroup() == "" {
				t.Skip("no cgroup can be made here")
			}
			if !c.cgroup {
				g.dropCgroup()
			}
			pids := filepath.Join(t.TempDir(), "pids")
			inner := "echo $$ >> " + pids + "; exec sleep 1003"
			if c.clearEnv {
				inner = "exec env -i sh -c 'echo $$ >> " + pids + "; exec sleep 1003'"
			}
			script := "setsid sh -c '" + strings.ReplaceAll(inner, "'", `'\''`) + "' & " +
				"(setsid sh -c '" + strings.ReplaceAll(inner, "'", `'\''`) + "' &); sleep 1000"
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = append(os.Environ(), g.Env())
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := g.Start(cmd, cmd.Start); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var escaped []int
			for deadline := time.Now().Add(10 * time.Second); len(escaped) < 2; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the escapees did not start: %v", escaped)
				}
				data, _ := os.ReadFile(pids)
				escaped = escaped[:0]
				for _, f := range strings.Fields(string(data)) {
					pid, _ := strconv.Atoi(f)
					escaped = append(escaped, pid)
				}
			}
			members := g.Members()
			for _, pid := range append(escaped, cmd.Process.Pid) {
				if !contains(members, pid) {
					t.Errorf("Members: got %v, want %d among them", members, pid)
				}
			}
			if err := g.Kill(); err != nil {
				t.Errorf("Kill: %v", err)
			}
			<-done
			for _, pid := range escaped {
				if Alive(pid) {
					t.Errorf("process %d is still running after Kill", pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

func contains(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// TestApply: limits are set soft and hard; one above the hard limit stays
// at the hard limit.
func TestApply(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	l := Limits{AddressSpace: 1 << 32, CPUSeconds: 50, FileSize: 1 << 20, Processes: 1 << 62}
	if err := l.Apply(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Max cpu time              50                   50                   seconds",
		"Max file size             1048576              1048576              bytes",
		"Max address space         4294967296           4294967296           bytes",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("limits: got\n%s\nwant a line %q", data, want)
		}
	}
	if !strings.Contains(string(data), "Max processes") {
		t.Errorf("limits: got\n%s\nwant a processes line", data)
	}
}

//go:build linux

package procs

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// markVar names the variable that marks a group's processes.
const markVar = "UNFOLD_PROCS"

// Grace periods of [Group.Kill]: how long members get after SIGTERM, and
// after SIGKILL, to be gone.
const (
	termGrace = time.Second
	killGrace = 2 * time.Second
)

// Group is the set of processes one run of a program started. Its methods
// are safe for concurrent use; the zero value is not usable, create one
// with [NewGroup].
type Group struct {
	mark string // the value of markVar in the members' environment

	// mu guards the fields below.
	mu   sync.Mutex
	cg   string // the cgroup's directory; "" when there is none
	root int    // the program's process ID, once started
}

// NewGroup returns an empty group, with a cgroup when one can be made.
func NewGroup() *Group {
	g := &Group{mark: rand.Text()}
	g.cg = makeCgroup()
	return g
}

// Env returns the "KEY=VALUE" entry to add to the program's environment,
// which marks it and what it starts as members.
func (g *Group) Env() string { return markVar + "=" + g.mark }

// Cgroup returns the group's cgroup directory, or "" when it has none.
func (g *Group) Cgroup() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cg
}

// Start starts cmd with start (usually cmd.Start, or a function that
// calls it) inside the group's cgroup when there is one (clone3 with
// CLONE_INTO_CGROUP), so that it and everything it starts are in it from
// the first instruction. When that fails, cmd is started again outside the
// cgroup, moved into it at once when the kernel lets it, and otherwise
// tracked by its mark alone. cmd.SysProcAttr may be set already.
//
// A cmd set up with [DieWithParent] is started from a thread that lives as
// long as this process (see spawner).
func (g *Group) Start(cmd *exec.Cmd, start func() error) error {
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
		unlocked := start
		start = func() error { return startLocked(unlocked) }
	}
	cg := g.Cgroup()
	if cg == "" {
		if err := start(); err != nil {
			return err
		}
		g.started(cmd.Process.Pid)
		return nil
	}
	dir, err := os.Open(cg)
	if err == nil {
		var attr syscall.SysProcAttr
		if cmd.SysProcAttr != nil {
			attr = *cmd.SysProcAttr
		}
		withCg := attr
		withCg.UseCgroupFD, withCg.CgroupFD = true, int(dir.Fd())
		fresh := *cmd
		cmd.SysProcAttr = &withCg
		err = start()
		dir.Close()
		if err == nil {
			g.started(cmd.Process.Pid)
			return nil
		}
		if cmd.Process != nil {
			return err
		}
		// A Cmd starts once: try again with a fresh one, without the
		// cgroup. The same error again means it was not the cgroup's.
		*cmd = exec.Cmd{Path: fresh.Path, Args: fresh.Args, Env: fresh.Env, Dir: fresh.Dir,
			Stdin: fresh.Stdin, Stdout: fresh.Stdout, Stderr: fresh.Stderr, ExtraFiles: fresh.ExtraFiles,
			SysProcAttr: &attr, Cancel: fresh.Cancel, WaitDelay: fresh.WaitDelay}
	}
	if err := start(); err != nil {
		g.dropCgroup()
		return err
	}
	pid := cmd.Process.Pid
	g.started(pid)
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		g.dropCgroup()
	}
	return nil
}

// DieWithParent has the kernel kill (SIGKILL) the process started with
// attr when this process dies without stopping it: killed with SIGKILL,
// out of memory, a crash. Closing an environment stops its processes in
// order; this is for when nothing runs to close it. It returns attr, made
// when nil. Start the process with [Group.Start].
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}

// spawner runs the starts of processes with a parent-death signal on one
// goroutine locked to its thread for the life of the process. The kernel
// sends the signal when the thread that started the child ends, not the
// process, and Go ends a thread when a goroutine locked to it returns: a
// start from any thread could kill the child while this process runs.
var spawner = sync.OnceValue(func() chan<- func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread()
		for fn := range ch {
			fn()
		}
	}()
	return ch
})

// startLocked runs start on the spawner's thread.
func startLocked(start func() error) error {
	done := make(chan error, 1)
	spawner() <- func() { done <- start() }
	return <-done
}

func (g *Group) started(pid int) {
	g.mu.Lock()
	g.root = pid
	g.mu.Unlock()
}

// Members returns the group's processes alive now: in its cgroup, or
// found by the scan (see the package documentation). Zombies are left out.
func (g *Group) Members() []int {
	g.mu.Lock()
	cg, root := g.cg, g.root
	g.mu.Unlock()
	seen := make(map[int]bool)
	if cg != "" {
		for _, pid := range cgroupProcs(cg) {
			seen[pid] = true
		}
	}
	for _, pid := range scan(root, g.mark) {
		seen[pid] = true
	}
	self := os.Getpid()
	out := make([]int, 0, len(seen))
	for pid := range seen {
		if pid != self && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Kill ends every member: SIGTERM, then SIGKILL to those left after a
// second. Members that are this process's children (orphans come here
// when it is a subreaper) are reaped, except the program itself, which its
// exec.Cmd waits for. It returns an error naming the processes that
// survived.
func (g *Group) Kill() error {
	known := make(map[int]bool)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		members := g.Members()
		if len(members) == 0 {
			return nil
		}
		for _, pid := range members {
			known[pid] = true
		}
		if cg := g.Cgroup(); sig == syscall.SIGKILL && cg != "" {
			// Kills new forks too, which signals sent one by one race.
			_ = os.WriteFile(filepath.Join(cg, "cgroup.kill"), []byte("1"), 0)
		}
		for _, pid := range members {
			_ = syscall.Kill(pid, sig)
		}
		grace := termGrace
		if sig == syscall.SIGKILL {
			grace = killGrace
		}
		if g.waitGone(grace, known) {
			return nil
		}
	}
	left := g.Members()
	if len(left) == 0 {
		return nil
	}
	pids := make([]string, len(left))
	for i, pid := range left {
		pids[i] = strconv.Itoa(pid)
	}
	return fmt.Errorf("procs: processes %s survived SIGKILL", strings.Join(pids, ", "))
}

// waitGone reaps and waits up to d for the members to be gone.
func (g *Group) waitGone(d time.Duration, known map[int]bool) bool {
	deadline := time.Now().Add(d)
	for {
		g.reap(known)
		if len(g.Members()) == 0 {
			// Members leaves zombies out: reap those that died since.
			g.reap(known)
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reap collects the zombies among known that are this process's children
// (orphans come here when it is a subreaper), other than the program
// itself, which its exec.Cmd waits for, and other than any child an
// os.Process holds (see orphans.go).
func (g *Group) reap(known map[int]bool) {
	g.mu.Lock()
	root := g.root
	g.mu.Unlock()
	self := os.Getpid()
	var zombies []int
	for pid := range known {
		if st, ok := readStat(pid); ok && pid != root && st.ppid == self && st.state == 'Z' {
			zombies = append(zombies, pid)
		}
	}
	if len(zombies) == 0 {
		return
	}
	if pidfdsHeld() {
		reapUnheld(zombies)
		return
	}
	for _, pid := range zombies {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// Close removes the group's cgroup, once it is empty. Call it after Kill.
func (g *Group) Close() {
	g.dropCgroup()
}

// dropCgroup removes the cgroup directory when it is empty, and forgets it.
func (g *Group) dropCgroup() {
	g.mu.Lock()
	cg := g.cg
	g.cg = ""
	g.mu.Unlock()
	if cg != "" {
		_ = os.Remove(cg)
	}
}

// cgroupBase is found once: where this process's cgroup (version 2) is, or
// "" when there is none.
var cgroupBase = sync.OnceValue(func() string {
	mount := ""
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		// The fields after " - " are the type, the source, the options.
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			mount = f[4]
			break
		}
	}
	if mount == "" {
		return ""
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(self), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(mount, path)
		}
	}
	return ""
})

// makeCgroup makes a new cgroup under this process's, or returns "".
func makeCgroup() string {
	base := cgroupBase()
	if base == "" {
		return ""
	}
	dir := filepath.Join(base, "unfold-"+strconv.Itoa(os.Getpid())+"-"+strings.ToLower(rand.Text()[:8]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return ""
	}
	return dir
}

// cgroupProcs lists the processes in the cgroup at dir.
func cgroupProcs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stat is what is read from /proc/<pid>/stat.
type stat struct {
	pid, ppid int
	state     byte
}

// stats reads /proc/<pid>/stat of every process.
func stats() []stat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]stat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

func readStat(pid int) (stat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return stat{}, false
	}
	st := stat{pid: pid, state: f[0][0]}
	st.ppid, _ = strconv.Atoi(f[1])
	return st, true
}

// Alive reports whether process pid runs: it exists and is not a zombie.
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	st, ok := readStat(pid)
	return !ok || st.state == 'Z' || st.state == 'X'
}

// scan returns the descendants of root (root included, when it is not 0)
// and the processes whose environment holds the mark.
func scan(root int, mark string) []int {
	all := stats()
	children := make(map[int][]int, len(all))
	for _, st := range all {
		children[st.ppid] = append(children[st.ppid], st.pid)
	}
	found := make(map[int]bool)
	if root > 0 {
		stack := []int{root}
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if found[pid] {
				continue
			}
			found[pid] = true
			stack = append(stack, children[pid]...)
		}
	}
	for _, st := range all {
		if !found[st.pid] && marked(st.pid, mark) {
			found[st.pid] = true
		}
	}
	out := make([]int, 0, len(found))
	for pid := range found {
		out = append(out, pid)
	}
	return out
}

// marked reports whether pid's environment holds markVar=mark.
func marked(pid int, mark string) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	defer f.Close()
	want := []byte(markVar + "=" + mark)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	sc.Split(splitNUL)
	for sc.Scan() {
		if bytes.Equal(sc.Bytes(), want) {
			return true
		}
	}
	return false
}

func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// Limits are resource limits for an environment's processes, set with
// prlimit(2) on the program and inherited by what it starts. Zero means
// no limit.
type Limits struct {
	// AddressSpace bounds each process's virtual memory, in bytes
	// (RLIMIT_AS): allocations past it fail.
	AddressSpace uint64 `json:"address_space,omitempty"`
	// CPUSeconds bounds each process's processor time (RLIMIT_CPU): past
	// it the process gets SIGXCPU, then SIGKILL.
	CPUSeconds uint64 `json:"cpu_seconds,omitempty"`
	// Processes bounds the processes the user may have (RLIMIT_NPROC,
	// which counts all of the user's processes, not the environment's,
	// and which the superuser is exempt from): forks past it fail.
	Processes uint64 `json:"processes,omitempty"`
	// FileSize bounds the size of each file a process writes, in bytes
	// (RLIMIT_FSIZE): writes past it fail with SIGXFSZ or EFBIG.
	FileSize uint64 `json:"file_size,omitempty"`
}

// Supported reports whether groups and limits work here: on Linux.
const Supported = true

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// Check reports whether the limits can be set here.
func (l Limits) Check() error { return nil }

// Apply sets the limits on process pid, soft and hard alike; a limit above
// the process's hard limit is set to that.
func (l Limits) Apply(pid int) error {
	for _, r := range []struct {
		resource int
		value    uint64
		name     string
	}{
		{unix.RLIMIT_AS, l.AddressSpace, "address space"},
		{unix.RLIMIT_CPU, l.CPUSeconds, "CPU seconds"},
		{unix.RLIMIT_NPROC, l.Processes, "processes"},
		{unix.RLIMIT_FSIZE, l.FileSize, "file size"},
	} {
		if r.value == 0 {
			continue
		}
		var old unix.Rlimit
		if err := unix.Prlimit(pid, r.resource, nil, &old); err != nil {
			return fmt.Errorf("procs: read the %s limit of process %d: %w", r.name, pid, err)
		}
		// Only a privileged process may raise a hard limit: one above it
		// stays at it.
		v := min(r.value, old.Max)
		lim := unix.Rlimit{Cur: v, Max: v}
		if err := unix.Prlimit(pid, r.resource, &lim, nil); err != nil {
			return fmt.Errorf("procs: set the %s limit of process %d: %w", r.name, pid, err)
		}
	}
	return nil
}

// Reached says which of the limits l ended a process that ended as st
// says, or "": one killed by SIGXFSZ past a file size limit, or by
// SIGXCPU or SIGKILL (as RLIMIT_CPU ends a process, soft and hard limits
// being alike) once its processor time reached the CPU limit. Whoever
// set the limit then knows to raise it.
func (l Limits) Reached(st *os.ProcessState) string {
	if st == nil {
		return ""
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	switch sig := ws.Signal(); {
	case sig == syscall.SIGXFSZ && l.FileSize > 0:
		return fmt.Sprintf("a file it wrote reached the file size limit (file_size, %d bytes)", l.FileSize)
	case (sig == syscall.SIGXCPU || sig == syscall.SIGKILL) && l.CPUSeconds > 0:
		// The kernel checks the limit at its ticks: a process it ended
		// has used the whole of it, one killed by someone else earlier
		// most likely not.
		used := st.UserTime() + st.SystemTime()
		if used >= time.Duration(l.CPUSeconds)*time.Second-100*time.Millisecond {
			return fmt.Sprintf("it used up its processor time limit (cpu_seconds, %d s, counted over the program's whole run)", l.CPUSeconds)
		}
	}
	return ""
}

// OpenFiles returns the soft limit on open files of process pid.
func OpenFiles(pid int) (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}

//go:build !linux

package procs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Supported reports whether groups and limits work here: on Linux.
const Supported = false

// Group is the set of processes one run of a program started. Away from
// Linux it holds the program's process group only.
type Group struct{ root int }

// NewGroup returns an empty group.
func NewGroup() *Group { return &Group{} }

// Env returns an entry with no effect: away from Linux there is no mark.
func (g *Group) Env() string { return "UNFOLD_PROCS=" }

// Cgroup returns "": there are no cgroups.
func (g *Group) Cgroup() string { return "" }

// DieWithParent returns attr, made when nil: away from Linux there is no
// parent-death signal.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	return attr
}

// Start starts cmd with start.
func (g *Group) Start(cmd *exec.Cmd, start func() error) error {
	if err := start(); err != nil {
		return err
	}
	g.root = cmd.Process.Pid
	return nil
}

// Members returns nothing: away from Linux the group cannot be scanned.
func (g *Group) Members() []int { return nil }

// Kill kills the program's process group.
func (g *Group) Kill() error {
	if g.root > 0 {
		_ = syscall.Kill(-g.root, syscall.SIGKILL)
	}
	return nil
}

// Close does nothing.
func (g *Group) Close() {}

// Limits are resource limits; away from Linux they cannot be set.
type Limits struct {
	AddressSpace uint64 `json:"address_space,omitempty"`
	CPUSeconds   uint64 `json:"cpu_seconds,omitempty"`
	Processes    uint64 `json:"processes,omitempty"`
	FileSize     uint64 `json:"file_size,omitempty"`
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// Check fails when a limit is set: they need Linux.
func (l Limits) Check() error {
	if !l.IsZero() {
		return errors.New("resource limits need Linux (prlimit)")
	}
	return nil
}

// Apply fails: limits need Linux.
func (l Limits) Apply(int) error { return l.Check() }

// Reached returns "": limits need Linux.
func (l Limits) Reached(*os.ProcessState) string { return "" }

// OpenFiles fails: it needs Linux.
func OpenFiles(int) (uint64, error) { return 0, errors.New("procs: open files: needs Linux") }

// Alive reports whether process pid exists.
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// AdoptOrphans needs Linux; elsewhere it returns an error wrapping
// [errors.ErrUnsupported].
func AdoptOrphans() (stop func(), err error) {
	return nil, fmt.Errorf("procs: adopt orphans: needs Linux: %w", errors.ErrUnsupported)
}

package term

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what is read from /proc/<pid>/stat.
type procStat struct {
	pid, ppid, pgrp, session int
	state                    byte
}

func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold anything; the fields
	// after the last ')' are plain.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, false
	}
	st := procStat{pid: pid, state: f[0][0]}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgrp, _ = strconv.Atoi(f[2])
	st.session, _ = strconv.Atoi(f[3])
	return st, true
}

// processes returns every process for which keep returns true.
func processes(keep func(procStat) bool) []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []procStat
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok && keep(st) {
			out = append(out, st)
		}
	}
	return out
}

// ReadingTerminal returns a process of process group pgid that is blocked
// reading the terminal named tty (the slave's path) or /dev/tty, and
// whether there is one. The group leader is checked first; the rest of the
// group only when the leader is not reading.
func ReadingTerminal(pgid int, tty string) (int, bool) {
	if pgid <= 0 {
		return 0, false
	}
	if readsTerminal(pgid, tty) {
		return pgid, true
	}
	for _, st := range processes(func(st procStat) bool { return st.pgrp == pgid && st.pid != pgid }) {
		if readsTerminal(st.pid, tty) {
			return st.pid, true
		}
	}
	return 0, false
}

// ReadingTerminalUnder is [ReadingTerminal] for a process group whose
// members descend from root (a shell's job, or a program's): it looks at
// root's descendants, which /proc/<pid>/task/<tid>/children lists, rather
// than at every process, which costs far less when many run. Where those
// lists cannot be read, it is ReadingTerminal.
func ReadingTerminalUnder(root, pgid int, tty string) (int, bool) {
	if pgid <= 0 {
		return 0, false
	}
	if readsTerminal(pgid, tty) {
		return pgid, true
	}
	found, ok := descendants(root)
	if !ok {
		return ReadingTerminal(pgid, tty)
	}
	for _, pid := range found {
		if pid == pgid {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgrp == pgid && readsTerminal(pid, tty) {
			return pid, true
		}
	}
	return 0, false
}

// descendants returns the processes descending from root, and whether the
// kernel lists children (CONFIG_PROC_CHILDREN).
func descendants(root int) ([]int, bool) {
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(pid) + "/task"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			if pid == root {
				return nil, false
			}
			continue // it ended meanwhile
		}
		for _, task := range tasks {
			data, err := os.ReadFile(dir + "/" + task.Name() + "/children")
			if err != nil {
				if pid == root && os.IsNotExist(err) {
					return nil, false
				}
				continue
			}
			for f := range strings.FieldsSeq(string(data)) {
				if child, err := strconv.Atoi(f); err == nil {
					out = append(out, child)
					queue = append(queue, child)
				}
			}
		}
	}
	return out, true
}

// Executable returns the path of the program process pid runs, as
// /proc/<pid>/exe names it, or "" when that cannot be read. A process
// forked and not yet exec'd runs its parent's program.
func Executable(pid int) string {
	path, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return path
}

// ReadsTerminal reports whether process pid is blocked reading the
// terminal named tty (the slave's path) or /dev/tty, as [ReadingTerminal]
// looks at a group's leader.
func ReadsTerminal(pid int, tty string) bool {
	return pid > 0 && readsTerminal(pid, tty)
}

// readsTerminal reports whether pid is blocked reading tty: in read(2) on
// it, or, as a line editor (readline in bash, gdb or a REPL) waits for a
// key, in pselect6(2) for descriptor 0 alone, with no timeout, when that is
// tty. /proc/<pid>/syscall holds the syscall number, then its arguments:
// read's descriptor; pselect6's descriptor count, read set, write set,
// exception set and timeout.
func readsTerminal(pid int, tty string) bool {
	p := "/proc/" + strconv.Itoa(pid)
	data, err := os.ReadFile(p + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return false
	}
	arg, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 32)
	if err != nil {
		return false
	}
	var fd uint64
	switch f[0] {
	case strconv.Itoa(syscall.SYS_READ):
		fd = arg
	case strconv.Itoa(syscall.SYS_PSELECT6):
		// Descriptor 0 alone, to read, until it is ready: a program that
		// polls with a timeout, or only sleeps, is not waiting for a key.
		if arg != 1 || len(f) < 6 || f[2] == "0x0" || f[3] != "0x0" || f[4] != "0x0" || f[5] != "0x0" {
			return false
		}
	default:
		return false
	}
	link, err := os.Readlink(p + "/fd/" + strconv.FormatUint(fd, 10))
	return err == nil && (link == tty || link == "/dev/tty")
}

// ReadCall is a read(2) that a process is blocked in: the descriptor, the
// buffer's address and the count asked for. A program reads its input at
// the same place with the same count every time, so a ReadCall seen at a
// known moment identifies that place later.
type ReadCall struct {
	FD         int
	Buf, Count uint64
}

// BlockedRead returns the read(2) that pid is blocked in, and whether it
// is blocked in one. It reads /proc/<pid>/syscall, which needs the right
// to trace pid (as its parent has).
func BlockedRead(pid int) (ReadCall, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return ReadCall{}, false
	}
	f := strings.Fields(string(data))
	if len(f) < 4 || f[0] != strconv.Itoa(syscall.SYS_READ) {
		return ReadCall{}, false
	}
	var args [3]uint64
	for i := range args {
		if args[i], err = strconv.ParseUint(strings.TrimPrefix(f[1+i], "0x"), 16, 64); err != nil {
			return ReadCall{}, false
		}
	}
	return ReadCall{FD: int(args[0]), Buf: args[1], Count: args[2]}, true
}

package term

import (
	"bytes"
	"encoding/binary"
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
// it; as a line editor (readline in bash, gdb or a REPL) waits for a key,
// in pselect6(2) for descriptor 0 alone, with no timeout, when that is
// tty; or, as an event loop (node's libuv, Python's asyncio and
// prompt_toolkit) waits, in poll(2), ppoll(2), epoll_wait(2) or
// epoll_pwait(2) with tty among the descriptors it waits to read, whatever
// its timeout: a loop that waits on sockets alone (a server) is not
// waiting for a key. /proc/<pid>/syscall holds the syscall number, then its
// arguments: read's descriptor; pselect6's descriptor count, read set,
// write set, exception set and timeout; poll's array of descriptors and
// their count; epoll_wait's epoll descriptor.
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
	arg, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
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
	case strconv.Itoa(syscall.SYS_POLL), strconv.Itoa(syscall.SYS_PPOLL):
		if len(f) < 3 {
			return false
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
		return err == nil && pollsTerminal(p, arg, n, tty)
	case strconv.Itoa(syscall.SYS_EPOLL_WAIT), strconv.Itoa(syscall.SYS_EPOLL_PWAIT), strconv.Itoa(sysEpollPwait2):
		return epollsTerminal(p, arg, tty)
	default:
		return false
	}
	return isTerminal(p, fd, tty)
}

// sysEpollPwait2 is epoll_pwait2(2)'s number on amd64 and arm64, which the
// syscall package does not name.
const sysEpollPwait2 = 441

// isTerminal reports whether descriptor fd of the process whose /proc
// directory is p is the terminal named tty, or /dev/tty.
func isTerminal(p string, fd uint64, tty string) bool {
	link, err := os.Readlink(p + "/fd/" + strconv.FormatUint(fd, 10))
	return err == nil && (link == tty || link == "/dev/tty")
}

// maxPollFDs bounds the descriptors of a poll(2) call that pollsTerminal
// reads.
const maxPollFDs = 1024

// pollsTerminal reports whether the poll(2) array of n descriptors at addr
// in the memory of the process whose /proc directory is p waits to read
// tty. Reading /proc/<pid>/mem needs the right to trace the process, as
// /proc/<pid>/syscall does.
func pollsTerminal(p string, addr, n uint64, tty string) bool {
	if n == 0 || n > maxPollFDs {
		return false
	}
	mem, err := os.Open(p + "/mem")
	if err != nil {
		return false
	}
	defer mem.Close()
	// struct pollfd: int fd; short events; short revents.
	buf := make([]byte, 8*n)
	if _, err := mem.ReadAt(buf, int64(addr)); err != nil {
		return false
	}
	const pollIn = 0x1
	for i := 0; i < len(buf); i += 8 {
		fd := int32(binary.NativeEndian.Uint32(buf[i:]))
		events := binary.NativeEndian.Uint16(buf[i+4:])
		if fd >= 0 && events&pollIn != 0 && isTerminal(p, uint64(fd), tty) {
			return true
		}
	}
	return false
}

// epollsTerminal reports whether the epoll instance at descriptor epfd of
// the process whose /proc directory is p watches tty for reading: its
// /proc/<pid>/fdinfo/<epfd> has a line "tfd: N events: E ..." for each
// descriptor it watches.
func epollsTerminal(p string, epfd uint64, tty string) bool {
	data, err := os.ReadFile(p + "/fdinfo/" + strconv.FormatUint(epfd, 10))
	if err != nil {
		return false
	}
	const epollIn = 0x1
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" {
			continue
		}
		fd, err1 := strconv.ParseUint(f[1], 10, 32)
		events, err2 := strconv.ParseUint(f[3], 16, 32)
		if err1 == nil && err2 == nil && events&epollIn != 0 && isTerminal(p, fd, tty) {
			return true
		}
	}
	return false
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

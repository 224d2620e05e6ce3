package term

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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

// ReadingTerminal returns a process of process group pgid that waits to
// read the terminal named tty (the slave's path) or /dev/tty, and whether
// there is one, however sure ([TerminalReader] says how sure).
func ReadingTerminal(pgid int, tty string) (int, bool) {
	pid, w := TerminalReader(pgid, tty)
	return pid, w != NotWaiting
}

// ReadingTerminalUnder is [ReadingTerminal] for a process group whose
// members descend from root (see [TerminalReaderUnder]).
func ReadingTerminalUnder(root, pgid int, tty string) (int, bool) {
	pid, w := TerminalReaderUnder(root, pgid, tty)
	return pid, w != NotWaiting
}

// TerminalReader returns the process of process group pgid that waits to
// read the terminal named tty (the slave's path) or /dev/tty, and how
// surely it waits. The group leader is looked at first; the rest of the
// group only when the leader is not surely reading, and one that surely
// reads is preferred.
func TerminalReader(pgid int, tty string) (int, Wait) {
	if pgid <= 0 {
		return 0, NotWaiting
	}
	w := readsTerminal(pgid, tty)
	if w == Waits {
		return pgid, w
	}
	return groupReader(pgid, w, processes(func(st procStat) bool { return st.pgrp == pgid && st.pid != pgid }), tty)
}

// TerminalReaderUnder is [TerminalReader] for a process group whose
// members descend from root (a shell's job, or a program's): it looks at
// root's descendants, which /proc/<pid>/task/<tid>/children lists, rather
// than at every process, which costs far less when many run. Where those
// lists cannot be read, it is TerminalReader.
func TerminalReaderUnder(root, pgid int, tty string) (int, Wait) {
	if pgid <= 0 {
		return 0, NotWaiting
	}
	w := readsTerminal(pgid, tty)
	if w == Waits {
		return pgid, w
	}
	found, ok := descendants(root)
	if !ok {
		return TerminalReader(pgid, tty)
	}
	var members []procStat
	for _, pid := range found {
		if pid == pgid {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgrp == pgid {
			members = append(members, st)
		}
	}
	return groupReader(pgid, w, members, tty)
}

// groupReader returns the surest reader of tty among the leader pgid,
// which waits as w, and the other members of its group.
func groupReader(pgid int, w Wait, members []procStat, tty string) (int, Wait) {
	best := pgid
	for _, st := range members {
		if mw := readsTerminal(st.pid, tty); mw > w {
			best, w = st.pid, mw
			if w == Waits {
				break
			}
		}
	}
	if w == NotWaiting {
		return 0, w
	}
	return best, w
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

// LoadsLibrary reports whether process pid has the shared library lib
// (such as "libreadline.so", of any version) loaded, as
// /proc/<pid>/maps lists it; false when that cannot be read.
func LoadsLibrary(pid int, lib string) bool {
	maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	return err == nil && bytes.Contains(maps, []byte("/"+lib))
}

// ReadsTerminal reports whether process pid waits to read the terminal
// named tty (the slave's path) or /dev/tty, however sure, as
// [ReadingTerminal] looks at a group's leader.
func ReadsTerminal(pid int, tty string) bool {
	return pid > 0 && readsTerminal(pid, tty) != NotWaiting
}

// readsTerminal tells whether pid waits to read tty. Surely when it is
// blocked in read(2) on it, or, as a line editor (readline in bash, gdb or
// a REPL) waits for a key, in pselect6(2) for descriptor 0 alone, with no
// timeout, when that is tty. Maybe when, as an event loop (node's libuv,
// Python's asyncio and prompt_toolkit) waits, it is in poll(2), ppoll(2),
// epoll_wait(2), epoll_pwait(2) or epoll_pwait2(2) with tty among the
// descriptors it waits to read, whatever its timeout: a loop that waits on
// sockets alone (a server) is not waiting for a key, but one that watches
// the terminal need not be asking (see [MayWait]). /proc/<pid>/syscall
// holds the syscall number, then its arguments: read's descriptor;
// pselect6's descriptor count, read set, write set, exception set and
// timeout; poll's array of descriptors and their count; epoll_wait's
// epoll descriptor.
func readsTerminal(pid int, tty string) Wait {
	p := "/proc/" + strconv.Itoa(pid)
	data, err := os.ReadFile(p + "/syscall")
	if err != nil {
		return NotWaiting
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return NotWaiting
	}
	nr, err1 := strconv.Atoi(f[0])
	arg, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	if err1 != nil || err2 != nil {
		return NotWaiting
	}
	var fd uint64
	switch {
	case nr == sysRead:
		fd = arg
	case nr == sysSelect:
		// Descriptor 0 alone, to read, until it is ready: a program that
		// polls with a timeout, or only sleeps, is not waiting for a key.
		if arg != 1 || len(f) < 6 || f[2] == "0x0" || f[3] != "0x0" || f[4] != "0x0" || f[5] != "0x0" {
			return NotWaiting
		}
	case slices.Contains(sysPolls, nr):
		if len(f) < 3 {
			return NotWaiting
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
		if err == nil && pollsTerminal(p, arg, n, tty) {
			return MayWait
		}
		return NotWaiting
	case slices.Contains(sysEpolls, nr):
		if epollsTerminal(p, arg, tty) {
			return MayWait
		}
		return NotWaiting
	default:
		return NotWaiting
	}
	if isTerminal(p, fd, tty) {
		return Waits
	}
	return NotWaiting
}

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

// maxEpollInfo bounds what epollsTerminal reads of an epoll instance's
// fdinfo: some 800 watched descriptors. A loop that watches more (a
// server with many connections) is taken not to wait for a key when the
// terminal is not among those, which keeps every look cheap.
const maxEpollInfo = 64 << 10

// epollsTerminal reports whether the epoll instance at descriptor epfd of
// the process whose /proc directory is p watches tty, or /dev/tty, for
// reading.
func epollsTerminal(p string, epfd uint64, tty string) bool {
	f, err := os.Open(p + "/fdinfo/" + strconv.FormatUint(epfd, 10))
	if err != nil {
		return false
	}
	defer f.Close()
	return epollWatches(f, terminalFiles(tty))
}

// fileID names a file as the kernel's fdinfo does: its inode number and
// the device of its file system, encoded as the kernel keeps it
// (major<<20 | minor).
type fileID struct{ ino, dev uint64 }

// terminalFiles returns the file IDs of tty and of /dev/tty.
func terminalFiles(tty string) []fileID {
	var ids []fileID
	for _, name := range []string{tty, "/dev/tty"} {
		var st unix.Stat_t
		if unix.Stat(name, &st) == nil {
			dev := uint64(st.Dev)
			ids = append(ids, fileID{ino: st.Ino, dev: uint64(unix.Major(dev))<<20 | uint64(unix.Minor(dev))})
		}
	}
	return ids
}

// epollWatches reports whether the fdinfo of an epoll instance, read
// from r, watches one of files for reading. It reads at most
// maxEpollInfo bytes of r. It has a line
// "tfd: FD events: E data: D pos: P ino: I sdev: S" (hexadecimal E, I and
// S) for each file watched; naming the file by inode and device stays true
// when the descriptor it was added by has been closed or reused since.
// A line cut short by the end of r is not counted.
func epollWatches(r io.Reader, files []fileID) bool {
	if len(files) == 0 {
		return false
	}
	const epollIn = 0x1
	br := bufio.NewReader(io.LimitReader(r, maxEpollInfo))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" {
			continue
		}
		events, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || events&epollIn == 0 {
			continue
		}
		var id fileID
		var inoOK, devOK bool
		for _, field := range f[4:] {
			if v, ok := strings.CutPrefix(field, "ino:"); ok {
				id.ino, err = strconv.ParseUint(v, 16, 64)
				inoOK = err == nil
			} else if v, ok := strings.CutPrefix(field, "sdev:"); ok {
				id.dev, err = strconv.ParseUint(v, 16, 64)
				devOK = err == nil
			}
		}
		if inoOK && devOK && slices.Contains(files, id) {
			return true
		}
	}
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
	if len(f) < 4 || f[0] != strconv.Itoa(sysRead) {
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

package term

import (
	"io"
	"slices"
)

// SpinLooks is how many times r looked at the terminal while spinning.
func SpinLooks(r *Reader) uint64 { return r.looks }

// EpollInfoCap is how much of an epoll instance's fdinfo is read.
const EpollInfoCap = maxEpollInfo

// EpollWatches reports whether the epoll fdinfo read from r watches the
// file with inode ino on the device dev (as fdinfo encodes it) for reading.
func EpollWatches(r io.Reader, ino, dev uint64) bool {
	return epollWatches(r, []fileID{{ino: ino, dev: dev}})
}

// EventLoopCall reports whether system call nr is one of the polls and
// epoll waits looked for.
func EventLoopCall(nr int) bool {
	return slices.Contains(sysPolls, nr) || slices.Contains(sysEpolls, nr)
}

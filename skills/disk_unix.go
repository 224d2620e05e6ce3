//go:build unix

package skills

import (
	"io"
	"io/fs"
	"syscall"
)

// openFlags are added to O_RDONLY when [diskFS] opens a file.
const openFlags = syscall.O_NONBLOCK

// openHead opens name to read its start with system calls alone: setting
// up an os.File (registering it with the poller, a finalizer) costs as
// much as reading a front matter does.
func (d diskFS) openHead(name string) (io.ReadCloser, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := openRetry(d.prefix+name, syscall.O_RDONLY|syscall.O_CLOEXEC|openFlags)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return fdFile(fd), nil
}

// openRetry opens path with open(2), again when a signal interrupts it.
func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// fdFile is a file open for reading, read with system calls alone.
type fdFile int

func (f fdFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f fdFile) Close() error { return syscall.Close(int(f)) }

//go:build unix

package skills

import (
	"io"
	"io/fs"
	"path"
	"syscall"
)

// openFlags are added to O_RDONLY when [diskFS] opens a file.
const openFlags = syscall.O_NONBLOCK

// openHead opens name to read its start with system calls alone: setting
// up an os.File (registering it with the poller, a finalizer) costs as
// much as reading a front matter does. A name that is a symbolic link is
// opened through an [os.Root] on its directory, so that a link leading
// out of the directory fails with errOutside.
func (d diskFS) openHead(name string) (io.ReadCloser, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := openRetry(d.prefix+name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|openFlags)
	if err == syscall.ELOOP {
		return d.openLink(name)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return fdFile(fd), nil
}

// openLink opens name, a symbolic link, through an [os.Root] on its
// directory.
func (d diskFS) openLink(name string) (io.ReadCloser, error) {
	dir, file := path.Split(name)
	f, err := openInside(d.prefix+dir, file, file)
	if err != nil {
		return nil, err
	}
	return f, nil
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

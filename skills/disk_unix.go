//go:build unix

package skills

import (
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// openFlags are added to O_RDONLY when [diskFS] opens a file.
const openFlags = syscall.O_NONBLOCK

// openHead opens name, a regular file, to read its start with system
// calls alone: setting up an os.File (registering it with the poller, a
// finalizer) costs as much as reading a front matter does. A file that is
// not regular is refused: a named pipe with a writer would fail the read
// (EAGAIN), or with none read as empty. A name that is a symbolic link is
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
	var st syscall.Stat_t
	if err := fstatRetry(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		// Rare: let the os package name what it is.
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		return nil, regular(name, fi)
	}
	return fdFile(fd), nil
}

// fstatRetry is fstat(2), again when a signal interrupts it.
func fstatRetry(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
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

// fileID tells a file apart from every other on the machine: its device
// and inode.
type fileID struct{ dev, ino uint64 }

// idOf returns the file's fileID, from what the os package looked at.
func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // their types differ by platform
}

// Package readfile reads input files whole: prompt files, params, spec
// files, context files. It reads only regular files, and only up to a
// limit: a named pipe, a socket or a device is refused with an error that
// says what it is, instead of a read that waits forever for a writer
// (a FIFO) or never ends (/dev/zero); a file past the limit is refused
// instead of filling memory.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"

	"github.com/spf13/afero"
)

// Sentinels for the two refusals; test with [errors.Is].
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// Error is a file that was refused: Err is [ErrNotRegular] or
// [ErrTooLarge], Detail says what the file is or how large.
type Error struct {
	Path   string
	Err    error
	Detail string
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() + ": " + e.Detail }

func (e *Error) Unwrap() error { return e.Err }

// Read returns the contents of the regular file at path, at most limit
// bytes. It opens the file without waiting (O_NONBLOCK), so a named pipe
// put in the file's place between the check and the open is refused too.
func Read(path string, limit int64) ([]byte, error) {
	f, err := open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(path, f, limit)
}

// Open opens the regular file at path for reading, for a caller that
// reads it as a stream and bounds what it keeps itself. Like [Read], it
// refuses what is not a regular file.
func Open(path string) (*os.File, error) { return open(path, math.MaxInt64) }

func open(path string, limit int64) (*os.File, error) {
	f, err := openChecked(path, limit, os.Stat, func(name string) (fileStat, error) {
		return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, err
	}
	return f.(*os.File), nil
}

// ReadFS is [Read] on a filesystem.
func ReadFS(fsys afero.Fs, name string, limit int64) ([]byte, error) {
	f, err := openChecked(name, limit, fsys.Stat, func(name string) (fileStat, error) {
		return fsys.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(name, f, limit)
}

// fileStat is an open file: *os.File or afero.File.
type fileStat interface {
	io.ReadCloser
	Stat() (fs.FileInfo, error)
}

// openChecked checks the file before opening it, so a device is never
// opened, and once open, so what was opened is what was checked.
func openChecked(name string, limit int64, stat func(string) (fs.FileInfo, error), openFile func(string) (fileStat, error)) (fileStat, error) {
	fi, err := stat(name)
	if err != nil {
		return nil, err
	}
	if err := check(name, fi, limit); err != nil {
		return nil, err
	}
	f, err := openFile(name)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = check(name, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readAll reads an open file, refusing one that grew past limit since it
// was checked.
func readAll(name string, f io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &Error{Path: name, Err: ErrTooLarge, Detail: fmt.Sprintf("more than the %d-byte limit", limit)}
	}
	return data, nil
}

// check refuses what is not a regular file, or is larger than limit.
func check(name string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return &Error{Path: name, Err: ErrNotRegular, Detail: "it is " + Kind(fi.Mode()) + "; give the path of a regular file"}
	}
	if fi.Size() > limit {
		return &Error{Path: name, Err: ErrTooLarge, Detail: fmt.Sprintf("%d bytes, more than the %d-byte limit", fi.Size(), limit)}
	}
	return nil
}

// Kind names the type of file mode describes, for messages: "a directory",
// "a named pipe (FIFO)", "a socket", "a device", "a regular file".
func Kind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

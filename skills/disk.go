package skills

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/unfold-dev/unfold/internal/readfile"
)

// diskFS is a folder on disk: os.DirFS, except that on Unix it opens files
// without waiting (O_NONBLOCK). Opening a named pipe where a file is
// expected then returns at once, and the pipe is refused (see regular),
// and opening a regular file takes fewer system calls, since the runtime
// need not switch the file to non-blocking and back.
type diskFS struct {
	dirFS         // os.DirFS(dir)
	prefix string // dir, ending with a slash
}

// dirFS is what os.DirFS offers.
type dirFS interface {
	fs.ReadDirFS
	fs.ReadFileFS
	fs.StatFS
}

// newDiskFS returns the folder at dir, an absolute path.
func newDiskFS(dir string) fs.FS {
	prefix := dir
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return diskFS{dirFS: os.DirFS(dir).(dirFS), prefix: prefix}
}

func (d diskFS) Open(name string) (fs.File, error) {
	if openFlags == 0 {
		return d.dirFS.Open(name)
	}
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := os.OpenFile(d.prefix+name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			pe.Path = name // as os.DirFS names it
		}
		return nil, err
	}
	return f, nil
}

// openHead opens name in fsys to read its start, as loading reads a
// front matter: on disk more cheaply than fsys.Open does.
func openHead(fsys fs.FS, name string) (io.ReadCloser, error) {
	if d, ok := fsys.(diskFS); ok {
		return d.openHead(name)
	}
	return openRegular(fsys, name)
}

// openRegular opens the regular file name in fsys, refusing what is not
// regular, before it is opened and after: an fs.FS may open files as
// os.DirFS does, waiting for a named pipe's writer. Only the look before
// the open keeps such a filesystem from waiting, so a file that becomes
// a named pipe between the two still can.
func openRegular(fsys fs.FS, name string) (fs.File, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := regular(name, fi); err != nil {
		return nil, err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(name, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrNotRegular is wrapped by the error of a read of a skill's file that
// is not a regular file: a named pipe, a socket, a device, a directory.
var ErrNotRegular = readfile.ErrNotRegular

// regular refuses what is not a regular file, as internal/readfile does
// for prompt files: reading a named pipe waits for a writer, a device may
// never end.
func regular(name string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &readfile.Error{Path: name, Err: readfile.ErrNotRegular,
		Detail: "it is " + readfile.Kind(fi.Mode()) + "; a skill's files are read only when they are regular files: replace it with one"}
}

// dirEntry is a directory entry as listing a skill's files needs it: its
// name and type (the type bits of a fs.FileMode).
type dirEntry struct {
	name string
	mode fs.FileMode
}

// readDir lists the directory name of fsys in name order; buf is the
// caller's, for reading a directory on disk (see diskFS.readDir).
func readDir(fsys fs.FS, name string, buf *[]byte) ([]dirEntry, error) {
	if d, ok := fsys.(diskFS); ok {
		return d.readDir(name, buf)
	}
	return readDirFS(fsys, name)
}

// readDirFS lists the directory name of fsys with fs.ReadDir.
func readDirFS(fsys fs.FS, name string) ([]dirEntry, error) {
	des, err := fs.ReadDir(fsys, name)
	entries := make([]dirEntry, len(des))
	for i, e := range des {
		entries[i] = dirEntry{e.Name(), e.Type()}
	}
	return entries, err
}

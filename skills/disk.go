package skills

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
)

// diskFS is a folder on disk: os.DirFS, except that on Unix it opens files
// without waiting (O_NONBLOCK). A named pipe where a file is expected then
// reads as empty instead of stopping the load until something writes to
// it, and opening a regular file takes fewer system calls, since the
// runtime need not switch the file to non-blocking and back.
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
	return fsys.Open(name)
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

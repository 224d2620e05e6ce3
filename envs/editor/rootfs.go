package editor

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/afero"
)

// RootFs is an [afero.Fs] confined to one directory by an [os.Root]: every
// name is resolved inside it, and a name that leads outside, through ".."
// or a symbolic link, fails with an error. Names are relative to the
// directory ("src/main.go"); absolute names fail. It also reports and
// creates symbolic links ([afero.Symlinker]), confined the same way.
//
// Unlike [afero.NewBasePathFs], which only prefixes names, it cannot be
// escaped through a symbolic link or a sibling directory whose name starts
// like the root's. It is safe for concurrent use.
type RootFs struct {
	root *os.Root
}

var (
	_ afero.Fs        = (*RootFs)(nil)
	_ afero.Symlinker = (*RootFs)(nil)
)

// NewRootFs opens dir as a confined filesystem. Close releases it.
func NewRootFs(dir string) (*RootFs, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("rootfs: open: %w", err)
	}
	return &RootFs{root: r}, nil
}

// Close releases the directory. Later calls fail.
func (r *RootFs) Close() error { return r.root.Close() }

// Dir returns the directory the filesystem was opened on.
func (r *RootFs) Dir() string { return r.root.Name() }

func native(name string) string { return filepath.FromSlash(name) }

// file converts an *os.File result, keeping a nil file a nil interface.
func file(f *os.File, err error) (afero.File, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Name returns "RootFs".
func (r *RootFs) Name() string { return "RootFs" }

// Create creates or truncates the named file.
func (r *RootFs) Create(name string) (afero.File, error) { return file(r.root.Create(native(name))) }

// Open opens the named file or directory for reading.
func (r *RootFs) Open(name string) (afero.File, error) { return file(r.root.Open(native(name))) }

// OpenFile opens the named file with flag and perm, as [os.OpenFile].
func (r *RootFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	return file(r.root.OpenFile(native(name), flag, perm))
}

// Mkdir creates a directory.
func (r *RootFs) Mkdir(name string, perm os.FileMode) error { return r.root.Mkdir(native(name), perm) }

// MkdirAll creates a directory and any missing parents.
func (r *RootFs) MkdirAll(name string, perm os.FileMode) error {
	return r.root.MkdirAll(native(name), perm)
}

// Remove removes a file or an empty directory.
func (r *RootFs) Remove(name string) error { return r.root.Remove(native(name)) }

// RemoveAll removes a path and everything under it.
func (r *RootFs) RemoveAll(name string) error { return r.root.RemoveAll(native(name)) }

// Rename renames a file; both names are inside the root.
func (r *RootFs) Rename(oldname, newname string) error {
	return r.root.Rename(native(oldname), native(newname))
}

// Stat describes the named file, following symbolic links.
func (r *RootFs) Stat(name string) (os.FileInfo, error) { return r.root.Stat(native(name)) }

// LstatIfPossible describes the named file without following a final
// symbolic link; the boolean is always true.
func (r *RootFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	fi, err := r.root.Lstat(native(name))
	return fi, true, err
}

// ReadlinkIfPossible returns the destination of a symbolic link.
func (r *RootFs) ReadlinkIfPossible(name string) (string, error) {
	return r.root.Readlink(native(name))
}

// SymlinkIfPossible creates newname as a symbolic link to oldname.
func (r *RootFs) SymlinkIfPossible(oldname, newname string) error {
	return r.root.Symlink(oldname, native(newname))
}

// Chmod changes the mode of the named file.
func (r *RootFs) Chmod(name string, mode os.FileMode) error { return r.root.Chmod(native(name), mode) }

// Chown changes the owner of the named file.
func (r *RootFs) Chown(name string, uid, gid int) error {
	return r.root.Chown(native(name), uid, gid)
}

// Chtimes changes the access and modification times of the named file.
func (r *RootFs) Chtimes(name string, atime, mtime time.Time) error {
	return r.root.Chtimes(native(name), atime, mtime)
}

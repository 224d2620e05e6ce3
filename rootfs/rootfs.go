// Package rootfs is an afero filesystem confined to one directory by an
// [os.Root]: a name that leads outside the directory, through ".." or a
// symbolic link, fails with an error instead of reaching outside.
//
// It is what the command-line front ends give to the places that read and
// write files in a project for the model (context files written by
// open_sections, and read back as MCP resources), so that a context
// directory or file that is a symbolic link to somewhere else cannot be
// used to write or read there. [afero.NewBasePathFs] only prefixes names
// and follows such links.
//
// [SaveNew] saves the output of a command cut to its budget under such a
// directory, bounding the total of the outputs saved there; [SaveNewIn]
// does the same in a directory of the operating system's file system.
//
// Names are slash-separated and relative to the directory
// ("context/a.md"); absolute names fail. A symbolic link inside the
// directory that points elsewhere inside it works as usual.
package rootfs

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/afero"
)

// FS is an [afero.Fs] whose every name is resolved inside one directory.
// It also reports, reads and makes symbolic links ([afero.Symlinker]),
// confined the same way. It is safe for concurrent use; Close releases
// the directory, and [FS.Root] gives the [os.Root] itself.
type FS struct {
	root *os.Root
}

var (
	_ afero.Fs        = (*FS)(nil)
	_ afero.Symlinker = (*FS)(nil)
)

// New opens dir as a confined filesystem. It fails when dir is not a
// directory that can be opened.
func New(dir string) (*FS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("rootfs: new: %w", err)
	}
	return &FS{root: r}, nil
}

// Root returns the [os.Root] every operation goes through, for callers
// that work with directory handles themselves.
func (f *FS) Root() *os.Root { return f.root }

// Close releases the directory; later operations fail.
func (f *FS) Close() error { return f.root.Close() }

// Dir returns the directory the filesystem was opened on, as given to New.
func (f *FS) Dir() string { return f.root.Name() }

// Name returns "rootfs".
func (f *FS) Name() string { return "rootfs" }

// osName turns a slash-separated name into one for the operating system.
func osName(name string) string { return filepath.FromSlash(name) }

// file is an open file that names itself as it was opened, relative to
// the directory, as afero's other filesystems do: a name from
// [afero.TempFile] can be given back to Rename or Remove.
type file struct {
	*os.File
	name string
}

// Name returns the name the file was opened with.
func (f file) Name() string { return f.name }

// aferoFile keeps a failed open a nil interface, not a nil file.
func aferoFile(name string, f *os.File, err error) (afero.File, error) {
	if err != nil {
		return nil, err
	}
	return file{File: f, name: name}, nil
}

// Create creates or truncates the named file.
func (f *FS) Create(name string) (afero.File, error) {
	fh, err := f.root.Create(osName(name))
	return aferoFile(name, fh, err)
}

// Open opens the named file or directory for reading.
func (f *FS) Open(name string) (afero.File, error) {
	fh, err := f.root.Open(osName(name))
	return aferoFile(name, fh, err)
}

// OpenFile opens the named file with flag and perm, as [os.OpenFile] does.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	fh, err := f.root.OpenFile(osName(name), flag, perm)
	return aferoFile(name, fh, err)
}

// Mkdir creates a directory.
func (f *FS) Mkdir(name string, perm os.FileMode) error {
	return f.root.Mkdir(osName(name), perm)
}

// MkdirAll creates a directory and the parents it lacks.
func (f *FS) MkdirAll(name string, perm os.FileMode) error {
	return f.root.MkdirAll(osName(name), perm)
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(name string) error { return f.root.Remove(osName(name)) }

// RemoveAll removes name and everything below it.
func (f *FS) RemoveAll(name string) error { return f.root.RemoveAll(osName(name)) }

// Rename renames a file; both names are inside the directory.
func (f *FS) Rename(oldname, newname string) error {
	return f.root.Rename(osName(oldname), osName(newname))
}

// Stat describes the named file, following symbolic links inside the
// directory.
func (f *FS) Stat(name string) (os.FileInfo, error) { return f.root.Stat(osName(name)) }

// LstatIfPossible describes the named file without following a final
// symbolic link; the boolean is always true.
func (f *FS) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	fi, err := f.root.Lstat(osName(name))
	return fi, true, err
}

// ReadlinkIfPossible returns the destination of a symbolic link.
func (f *FS) ReadlinkIfPossible(name string) (string, error) {
	return f.root.Readlink(osName(name))
}

// SymlinkIfPossible makes newname a symbolic link to oldname.
func (f *FS) SymlinkIfPossible(oldname, newname string) error {
	return f.root.Symlink(oldname, osName(newname))
}

// Chmod changes the mode of the named file.
func (f *FS) Chmod(name string, mode os.FileMode) error {
	return f.root.Chmod(osName(name), mode)
}

// Chown changes the owner of the named file.
func (f *FS) Chown(name string, uid, gid int) error {
	return f.root.Chown(osName(name), uid, gid)
}

// Chtimes changes the access and modification times of the named file.
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	return f.root.Chtimes(osName(name), atime, mtime)
}

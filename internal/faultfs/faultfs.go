// Package faultfs is an afero filesystem that fails the way a full disk
// does, for tests that check nothing is lost when writes fail.
package faultfs

import (
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/spf13/afero"
)

// Full wraps a filesystem whose disk can fill up: while full, a write to a
// file opened for writing stores half its bytes and fails with ENOSPC, as a
// real full disk does. It is safe for concurrent use.
type Full struct {
	afero.Fs
	full atomic.Bool
}

// NewFull wraps base, with room to write.
func NewFull(base afero.Fs) *Full { return &Full{Fs: base} }

// SetFull fills the disk (true) or makes room again (false).
func (f *Full) SetFull(full bool) { f.full.Store(full) }

// OpenFile opens a file whose writes fail while the disk is full.
func (f *Full) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil || flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return file, err
	}
	return &fullFile{File: file, fs: f}, nil
}

// Create creates a file whose writes fail while the disk is full.
func (f *Full) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

type fullFile struct {
	afero.File
	fs *Full
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

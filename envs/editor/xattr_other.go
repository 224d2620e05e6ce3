//go:build !linux && !darwin

package editor

import (
	"errors"
	"syscall"

	"github.com/spf13/afero"
)

// xattr is one extended attribute of a file. Outside Linux and macOS the editor
// reads none.
type xattr struct {
	name  string
	value []byte
}

// fdOf finds no descriptor outside Linux and macOS: extended attributes are not
// read there.
func fdOf(afero.File) (int, bool) { return -1, false }

func readAttrs(int) ([]xattr, error) { return nil, nil }

func copyAttrs(int, []xattr) error { return nil }

// replaceRefused reports whether a rename over a file failed because the
// file cannot be replaced, though it may be written.
func replaceRefused(err error) bool {
	return errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM)
}

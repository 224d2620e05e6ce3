//go:build !linux

package dirwatch

import (
	"errors"
	"fmt"
)

// Watcher follows one directory (see the package doc); on this system
// there is none.
type Watcher struct{}

// New fails with [errors.ErrUnsupported]: this system has no watcher
// that can be asked without waiting.
func New(dir string, match func(name string) bool) (*Watcher, error) {
	return nil, fmt.Errorf("dirwatch: watch %s: %w", dir, errors.ErrUnsupported)
}

// Changed reports a change: there is no watch.
func (w *Watcher) Changed() (bool, error) { return true, errors.ErrUnsupported }

// Close does nothing.
func (w *Watcher) Close() error { return nil }

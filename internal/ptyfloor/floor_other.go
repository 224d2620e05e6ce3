//go:build !linux

package ptyfloor

import (
	"errors"
	"time"
)

// Term needs Linux.
type Term struct{}

// Start needs Linux; elsewhere it returns an error.
func Start(spin time.Duration, env []string, name string, args ...string) (*Term, error) {
	return nil, errors.New("the pty floors need Linux")
}

// RoundTrip needs Linux.
func (r *Term) RoundTrip(line, want []byte) error { return errors.New("the pty floors need Linux") }

// Until needs Linux.
func (r *Term) Until(want []byte) error { return errors.New("the pty floors need Linux") }

// Close needs Linux.
func (r *Term) Close() {}

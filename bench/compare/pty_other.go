//go:build !linux

package main

import (
	"errors"
	"time"
)

type rawTerm struct{}

func startRaw(spin time.Duration, env []string, name string, args ...string) (*rawTerm, error) {
	return nil, errors.New("the pty floors need Linux")
}

func (r *rawTerm) roundTrip(line, want []byte) error { return errors.New("the pty floors need Linux") }
func (r *rawTerm) until(want []byte) error           { return errors.New("the pty floors need Linux") }
func (r *rawTerm) close()                            {}

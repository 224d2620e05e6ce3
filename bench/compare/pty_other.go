//go:build !linux

package main

import "errors"

type rawTerm struct{}

func startRaw(env []string, name string, args ...string) (*rawTerm, error) {
	return nil, errors.New("the pty floors need Linux")
}

func (r *rawTerm) roundTrip(line, want []byte) error { return errors.New("the pty floors need Linux") }
func (r *rawTerm) until(want []byte) error           { return errors.New("the pty floors need Linux") }
func (r *rawTerm) close()                            {}

//go:build !linux

package bash

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// supported reports whether this platform can run the environment: the
// shell reads the terminal's state from /proc, which only Linux has.
const supported = false

var errUnsupported = errors.New("bash environments need Linux")

func openPTY() (master, slave *os.File, err error) { return nil, nil, errUnsupported }
func fixTermios(*os.File) (bool, error)            { return false, errUnsupported }
func foreground(*os.File) (int, error)             { return 0, errUnsupported }
func startOnPTY(*exec.Cmd, *os.File) error         { return errUnsupported }
func readingTerminal(int, string) (int, bool)      { return 0, false }
func signalGroup(int, syscall.Signal)              {}
func endSession(int, int) error                    { return errUnsupported }

// killGrace bounds the wait for a killed shell.
const killGrace = 0

// BecomeSubreaper is supported on Linux only; elsewhere it returns an error.
func BecomeSubreaper() error { return errUnsupported }

//go:build !linux

package interactive

import (
	"errors"
	"os"
	"os/exec"
)

// supported reports whether this platform can run the environment.
const supported = false

var errUnsupported = errors.New("interactive environments need Linux")

func openPTY() (master, slave *os.File, err error) { return nil, nil, errUnsupported }
func fixTermios(*os.File) (bool, error)            { return false, errUnsupported }
func startOnPTY(*exec.Cmd, *os.File) error         { return errUnsupported }
func endSession(int, int) error                    { return errUnsupported }
func inputQueued(*os.File) (int, error)            { return 0, errUnsupported }

// killGrace bounds the wait for a killed program.
const killGrace = 0

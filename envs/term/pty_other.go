//go:build !linux

package term

import (
	"os"
	"os/exec"
	"syscall"
)

// Supported reports whether this platform has the terminal helpers: they
// read process state from /proc, which only Linux has.
const Supported = false

// KillGrace is how long processes get to die after SIGKILL.
const KillGrace = 0

// OpenPTY needs Linux; elsewhere it returns [ErrUnsupported].
func OpenPTY() (master, slave *os.File, err error) { return nil, nil, ErrUnsupported }

// FixModes needs Linux; elsewhere it returns [ErrUnsupported].
func FixModes(*os.File) (bool, error) { return false, ErrUnsupported }

// Foreground needs Linux; elsewhere it returns [ErrUnsupported].
func Foreground(*os.File) (int, error) { return 0, ErrUnsupported }

// InputQueued needs Linux; elsewhere it returns [ErrUnsupported].
func InputQueued(*os.File) (int, error) { return 0, ErrUnsupported }

// Start needs Linux; elsewhere it returns [ErrUnsupported].
func Start(*exec.Cmd, *os.File) error { return ErrUnsupported }

// ReadingTerminal needs Linux; elsewhere it finds nothing.
func ReadingTerminal(int, string) (int, bool) { return 0, false }

// SignalGroup needs Linux; elsewhere it does nothing.
func SignalGroup(int, syscall.Signal) {}

// EndSession needs Linux; elsewhere it returns [ErrUnsupported].
func EndSession(int, int) error { return ErrUnsupported }

// BecomeSubreaper needs Linux; elsewhere it returns [ErrUnsupported].
func BecomeSubreaper() error { return ErrUnsupported }

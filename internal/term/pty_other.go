//go:build !linux

package term

import (
	"os"
	"os/exec"
	"syscall"
	"time"
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

// GetSize needs Linux; elsewhere it returns [ErrUnsupported].
func GetSize(*os.File) (Size, error) { return Size{}, ErrUnsupported }

// SetSize needs Linux; elsewhere it returns [ErrUnsupported].
func SetSize(*os.File, Size) error { return ErrUnsupported }

// EchoOff needs Linux; elsewhere it reports false.
func EchoOff(*os.File) bool { return false }

// InterruptKey needs Linux; elsewhere it reports false.
func InterruptKey(*os.File) bool { return false }

// Foreground needs Linux; elsewhere it returns [ErrUnsupported].
func Foreground(*os.File) (int, error) { return 0, ErrUnsupported }

// InputQueued needs Linux; elsewhere it returns [ErrUnsupported].
func InputQueued(*os.File) (int, error) { return 0, ErrUnsupported }

// Start needs Linux; elsewhere it returns [ErrUnsupported].
func Start(*exec.Cmd, *os.File) error { return ErrUnsupported }

// ReadingTerminal needs Linux; elsewhere it finds nothing.
func ReadingTerminal(int, string) (int, bool) { return 0, false }

// ReadingTerminalUnder needs Linux; elsewhere it finds nothing.
func ReadingTerminalUnder(int, int, string) (int, bool) { return 0, false }

// TerminalReader needs Linux; elsewhere it finds nothing.
func TerminalReader(int, string) (int, Wait) { return 0, NotWaiting }

// TerminalReaderUnder needs Linux; elsewhere it finds nothing.
func TerminalReaderUnder(int, int, string) (int, Wait) { return 0, NotWaiting }

// Executable needs Linux; elsewhere it returns "".
func Executable(int) string { return "" }

// FlushInput needs Linux; elsewhere it returns [ErrUnsupported].
func FlushInput(string) error { return ErrUnsupported }

// ReadsTerminal needs Linux; elsewhere it reports false.
func ReadsTerminal(int, string) bool { return false }

// LoadsLibrary needs Linux; elsewhere it reports false.
func LoadsLibrary(int, string) bool { return false }

// WaitExited needs Linux; elsewhere it returns [ErrUnsupported].
func WaitExited(int) error { return ErrUnsupported }

// SignalGroup needs Linux; elsewhere it does nothing.
func SignalGroup(int, syscall.Signal) {}

// EndSession needs Linux; elsewhere it returns [ErrUnsupported].
func EndSession(int, int) error { return ErrUnsupported }

// ReadCall is a read(2) that a process is blocked in.
type ReadCall struct {
	FD         int
	Buf, Count uint64
}

// BlockedRead needs Linux; elsewhere it reports none.
func BlockedRead(int) (ReadCall, bool) { return ReadCall{}, false }

// Reader needs Linux; elsewhere [OpenDirect] returns [ErrUnsupported].
type Reader struct{}

// OpenDirect needs Linux; elsewhere it returns [ErrUnsupported].
func OpenDirect() (master *os.File, r *Reader, slave *os.File, err error) {
	return nil, nil, nil, ErrUnsupported
}

// Read needs Linux; elsewhere it returns [ErrUnsupported].
func (*Reader) Read([]byte, time.Time) (int, error) { return 0, ErrUnsupported }

// SpinUntil needs Linux; elsewhere it does nothing.
func (*Reader) SpinUntil(time.Time) {}

// Wake needs Linux; elsewhere it does nothing.
func (*Reader) Wake() {}

// Close needs Linux; elsewhere it does nothing.
func (*Reader) Close() error { return nil }

//go:build linux

package term

import (
	"os"
	"syscall"
	"unsafe"
)

// MaxCanonLine is the longest line, without its newline, that a program
// reading its terminal in canonical mode gets whole: Linux's line
// discipline keeps 4,096 bytes of a line being typed, the newline
// included, and drops the rest silently.
const MaxCanonLine = 4095

// Canonical reports whether the terminal of tty (the master or the slave)
// is in canonical mode, where the line discipline edits a line and hands
// it over at the newline (Python's input() and other programs without a
// line editor). Line editors such as readline turn it off while they
// read, and take lines of any length. It reports false when the mode
// cannot be read.
func Canonical(tty *os.File) bool {
	var t syscall.Termios
	if err := ioctl(tty, syscall.TCGETS, uintptr(unsafe.Pointer(&t))); err != nil {
		return false
	}
	return t.Lflag&syscall.ICANON != 0
}

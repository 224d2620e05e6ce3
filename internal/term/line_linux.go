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

// LineKeys returns the bytes that the line discipline of tty's terminal
// takes as keys, not as text, each with what it does ("interrupt",
// "erase"), when the terminal is in canonical mode; canonical is false
// when it is not (a line editor or another program reads it key by key)
// or the mode cannot be read. They are the terminal's current special
// characters that its flags enable (signals: ISIG; editing: ICANON, and
// IEXTEN for the extended ones; flow control: IXON), and the carriage
// return, which ICRNL turns into a newline and IGNCR drops. Every other
// byte reaches the program as it is: ESC, Ctrl-A.
func LineKeys(tty *os.File) (keys map[byte]string, canonical bool) {
	var t syscall.Termios
	if err := ioctl(tty, syscall.TCGETS, uintptr(unsafe.Pointer(&t))); err != nil || t.Lflag&syscall.ICANON == 0 {
		return nil, false
	}
	keys = map[byte]string{}
	add := func(on bool, index int, what string) {
		// 0 (_POSIX_VDISABLE) turns a special character off.
		if c := t.Cc[index]; on && c != 0 {
			if _, ok := keys[c]; !ok {
				keys[c] = what
			}
		}
	}
	isig, iexten, ixon := t.Lflag&syscall.ISIG != 0, t.Lflag&syscall.IEXTEN != 0, t.Iflag&syscall.IXON != 0
	add(isig, syscall.VINTR, "interrupt")
	add(isig, syscall.VQUIT, "quit")
	add(isig, syscall.VSUSP, "suspend")
	add(true, syscall.VEOF, "end of input")
	add(true, syscall.VERASE, "erase")
	add(true, syscall.VKILL, "erase line")
	add(true, syscall.VEOL, "end of line")
	add(true, syscall.VEOL2, "end of line")
	add(iexten, syscall.VWERASE, "erase word")
	add(iexten, syscall.VLNEXT, "literal next")
	add(iexten, syscall.VREPRINT, "reprint")
	add(iexten, syscall.VDISCARD, "discard output")
	add(ixon, syscall.VSTOP, "stop output")
	add(ixon, syscall.VSTART, "start output")
	switch {
	case t.Iflag&syscall.IGNCR != 0:
		keys['\r'] = "dropped"
	case t.Iflag&syscall.ICRNL != 0:
		keys['\r'] = "end of line"
	}
	return keys, true
}

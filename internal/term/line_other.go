//go:build !linux

package term

import "os"

// MaxCanonLine is the longest line a program reading its terminal in
// canonical mode gets whole on Linux.
const MaxCanonLine = 4095

// Canonical needs Linux; elsewhere it reports false.
func Canonical(*os.File) bool { return false }

// LineKeys needs Linux; elsewhere it reports no canonical mode.
func LineKeys(*os.File) (keys map[byte]string, canonical bool) { return nil, false }

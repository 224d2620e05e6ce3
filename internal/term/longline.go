package term

import (
	"os"
	"strings"
)

// LongLine returns the number (from 1) and length of the first line of
// text, to be typed to tty, that a program reading it in canonical mode
// would get cut: longer than MaxCanonLine. It returns 0 when there is
// none, or when tty is not in canonical mode (see [Canonical]).
func LongLine(tty *os.File, text string) (line, n int) {
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if len(l) > MaxCanonLine {
			if !Canonical(tty) {
				return 0, 0
			}
			return i + 1, len(l)
		}
	}
	return 0, 0
}

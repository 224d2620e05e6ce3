// Package printable writes text from outside (file names, property
// names) so that it shows as what it is in a message, a prompt or a
// terminal: control characters, newlines among them, and other characters
// that do not print are escaped the way Go quotes them, so that a name
// cannot start a line of its own or move the cursor.
package printable

import (
	"strconv"
	"strings"
)

// String returns s with each character that [strconv.IsPrint] rejects
// (control characters, line and paragraph separators, formatting
// characters such as U+202E) escaped as Go escapes it in a quoted string:
// "a\nb" becomes `a\nb`, ESC becomes `\x1b`. Other characters, spaces
// and backslashes among them, are kept; bytes that are not UTF-8 become
// U+FFFD. s is returned as it is when nothing needs escaping.
func String(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range s {
		if strconv.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// Package utf8cut cuts text to a number of bytes without splitting a UTF-8
// sequence, for the messages, events and screens that bound what they keep.
package utf8cut

import "unicode/utf8"

// Prefix returns the longest start of s of at most n bytes that does not
// end inside a UTF-8 sequence (s itself when it fits; "" when n <= 0).
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

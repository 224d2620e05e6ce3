package markdown

import "strings"

// OpenFence returns the 1-based line of a code fence (``` or ~~~) that text
// opens and never closes, or 0 when every fence is closed. Such a body would
// swallow the rest of the prompt into its code block. Fences follow
// CommonMark: at most three spaces of indentation, three or more backticks or
// tildes, closed by a line of the same character at least as long.
func OpenFence(text string) int {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return 0
	}
	var (
		open     int  // line of the open fence, 0 when none
		fenceCh  byte // '`' or '~'
		fenceLen int
	)
	for n := 1; text != ""; n++ {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		ch, length, rest, ok := fenceLine(line)
		if !ok {
			continue
		}
		if open == 0 {
			if ch == '`' && strings.Contains(rest, "`") {
				continue // an info string with a backtick: not a fence
			}
			open, fenceCh, fenceLen = n, ch, length
			continue
		}
		if ch == fenceCh && length >= fenceLen && strings.TrimSpace(rest) == "" {
			open = 0
		}
	}
	return open
}

// CloseFence returns text with a line closing the code fence it leaves
// open (see OpenFence), so that it cannot swallow what follows it; text
// itself when every fence is closed.
func CloseFence(text string) string {
	line := OpenFence(text)
	if line == 0 {
		return text
	}
	ch, length, _, _ := fenceLine(strings.Split(text, "\n")[line-1])
	return text + "\n" + strings.Repeat(string(ch), length)
}

// fenceLine reports whether line starts a fence, returning its character,
// length and what follows it.
func fenceLine(line string) (ch byte, length int, rest string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	i := 0
	for i < len(line) && i < 4 && line[i] == ' ' {
		i++
	}
	if i > 3 || i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, "", false
	}
	ch = line[i]
	j := i
	for j < len(line) && line[j] == ch {
		j++
	}
	if j-i < 3 {
		return 0, 0, "", false
	}
	return ch, j - i, line[j:], true
}

// Dedent removes the longest run of spaces and tabs that every non-blank
// line starts with, turns whitespace-only lines into empty ones, and trims
// the result.
func Dedent(s string) string {
	prefix, first := "", true
	for rest := s; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		n := 0
		for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
			n++
		}
		if strings.TrimRight(line[n:], "\r") == "" {
			continue // blank
		}
		indent := line[:n]
		if first {
			prefix, first = indent, false
		} else {
			n = 0
			for n < len(prefix) && n < len(indent) && prefix[n] == indent[n] {
				n++
			}
			prefix = prefix[:n]
		}
		if prefix == "" {
			break
		}
	}
	if prefix == "" {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) == "" {
			if strings.HasSuffix(line, "\n") {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteString(strings.TrimPrefix(line, prefix))
	}
	return strings.TrimSpace(b.String())
}

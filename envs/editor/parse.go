package editor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Command names.
const (
	cmdView   = "view"
	cmdEdit   = "edit"
	cmdSearch = "search"
	cmdCreate = "create"
	cmdClose  = "close"
	cmdNext   = "next_match"
	cmdPrev   = "prev_match"
	cmdUndo   = "undo"
)

// viewKind says what bounds a view.
type viewKind uint8

const (
	byPatterns viewKind = iota // a start and an end pattern
	byLines                    // line numbers
	wholeFile                  // the whole file
)

// command is one parsed editor command. Which fields are set depends on
// name.
type command struct {
	name string
	path string // view, edit, create, undo: the file as written (unquoted)

	kind       viewKind // view: what bounds it
	start, end string   // view by patterns: as written, between the slashes
	label      string   // view: optional

	// edit, view by lines: the line range, 1-based, inclusive; for a view,
	// to is 0 when the range is open ("3-": from line 3 on).
	from, to int

	content    string // edit, create: the text after the first line
	hasContent bool   // whether the text had a second line at all

	id int // close, next_match, prev_match

	pattern string // search: the pattern as written
	glob    string // search
}

// parse reads a full command text: a first line holding the command and its
// arguments, then, for edit and create, the content lines. It never panics;
// a bad command is an error saying what was wrong and what to write.
func parse(text string) (command, error) {
	first, rest, more := strings.Cut(text, "\n")
	first = strings.TrimSpace(first)
	name, args := cutWord(first)
	c := command{name: name}
	var err error
	switch name {
	case cmdView:
		err = c.parseView(args)
	case cmdEdit:
		err = c.parseEdit(args)
	case cmdCreate:
		c.path, err = onlyPath(args, "write create <file>, then the content lines", "the content goes on the lines below create <file>")
	case cmdUndo:
		c.path, err = onlyPath(args, "write undo <file>", "write undo <file>")
	case cmdSearch:
		err = c.parseSearch(args)
	case cmdClose, cmdNext, cmdPrev:
		c.id, err = parseID(name, args)
	case "":
		return c, errors.New("empty command")
	default:
		return c, fmt.Errorf("unknown command %q", clip(name, 40))
	}
	if err != nil {
		return c, err
	}
	switch name {
	case cmdEdit, cmdCreate:
		c.content, c.hasContent = rest, more
	default:
		if strings.TrimSpace(rest) != "" {
			return c, fmt.Errorf("%s takes one line; remove the lines after it", name)
		}
	}
	return c, nil
}

// onlyPath reads arguments that are one file name; usage says how to
// write the command, after what to write instead of more arguments.
func onlyPath(args, usage, after string) (string, error) {
	p, rest, err := cutPath(args)
	switch {
	case err != nil:
		return "", err
	case p == "":
		return "", errors.New("missing file; " + usage)
	case rest != "":
		return "", fmt.Errorf("unexpected %q after the file; %s", clip(rest, 40), after)
	}
	return p, nil
}

func (c *command) parseView(args string) error {
	const usage = "write view <file> /<start>/ /<end>/ [label], view <file> <from>-<to> [label] or view <file>"
	var err error
	c.path, args, err = cutPath(args)
	if err != nil {
		return err
	}
	if c.path == "" {
		return errors.New("missing file; " + usage)
	}
	if args == "" {
		c.kind = wholeFile
		return nil
	}
	if args[0] != '/' {
		if ok, err := c.parseViewLines(args); ok || err != nil {
			return err
		}
		w, _ := cutWord(args)
		return fmt.Errorf("the start pattern must be written between slashes, like /^def main/ (got %q); or give line numbers, like 3-6", clip(w, 40))
	}
	if c.start, args, err = cutPattern("start", args); err != nil {
		return err
	}
	if w, after := cutWord(args); w == "to" {
		args = after
	} else if strings.HasPrefix(args, "to/") {
		args = args[2:]
	}
	if c.end, args, err = cutPattern("end", args); err != nil {
		return err
	}
	c.label = unquoteLabel(args)
	return nil
}

// parseViewLines reads the line range of a view by lines: "3-6", "3 6",
// "3-" or "3 -1" (from line 3 on), "3" (line 3 alone); then an optional
// label. ok is false when args does not start with a line number.
func (c *command) parseViewLines(args string) (ok bool, err error) {
	w, rest := cutWord(args)
	a, b, isRange := strings.Cut(w, "-")
	from, err := strconv.Atoi(a)
	if err != nil || strings.HasPrefix(a, "+") {
		return false, nil
	}
	to := from
	switch {
	case isRange && b == "":
		to = 0
	case isRange:
		if to, err = strconv.Atoi(b); err != nil || strings.HasPrefix(b, "+") {
			return true, fmt.Errorf("bad line range %q; write two line numbers, like 3-6", clip(w, 40))
		}
	default:
		if w2, after := cutWord(rest); w2 == "-1" {
			to, rest = 0, after
		} else if n, err := strconv.Atoi(w2); err == nil && !strings.HasPrefix(w2, "+") {
			if n < 1 {
				return true, fmt.Errorf("bad line range %q; line numbers start at 1 (-1 stands for the end of the file)", clip(w+" "+w2, 40))
			}
			to, rest = n, after
		}
	}
	switch {
	case from < 1 || to < 0:
		return true, fmt.Errorf("bad line range %q; line numbers start at 1", clip(w, 40))
	case to != 0 && to < from:
		return true, fmt.Errorf("bad line range %q; the first line comes first, like %d-%d", clip(w, 40), to, from)
	case to != 0 && to-from >= maxViewLines:
		return true, fmt.Errorf("line range %d-%d is %d lines; a view shows at most %d, so view fewer, like %d-%d", from, to, to-from+1, maxViewLines, from, from+maxViewLines-1)
	}
	c.kind, c.from, c.to, c.label = byLines, from, to, unquoteLabel(rest)
	return true, nil
}

// unquoteLabel strips the double quotes around a label.
func unquoteLabel(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func (c *command) parseEdit(args string) error {
	const usage = "write edit <file> <start>-<end>, then the new lines"
	var err error
	c.path, args, err = cutPath(args)
	if err != nil {
		return err
	}
	if c.path == "" {
		return errors.New("missing file; " + usage)
	}
	r, extra := cutWord(args)
	if r == "" {
		return errors.New("missing line range; " + usage)
	}
	if extra != "" {
		return fmt.Errorf("unexpected %q after the line range; the new lines go below the edit line", clip(extra, 40))
	}
	a, b, isRange := strings.Cut(r, "-")
	if !isRange {
		b = a
	}
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil || strings.HasPrefix(a, "+") || strings.HasPrefix(b, "+"):
		return fmt.Errorf("bad line range %q; write two line numbers from the view, like 45-50", clip(r, 40))
	case from < 1 || to < 1:
		return fmt.Errorf("bad line range %q; line numbers start at 1", clip(r, 40))
	case to < from:
		return fmt.Errorf("bad line range %q; the first line comes first, like %d-%d", clip(r, 40), to, from)
	}
	c.from, c.to = from, to
	return nil
}

func (c *command) parseSearch(args string) error {
	const usage = `write search "<pattern>" <glob>`
	if args == "" {
		return errors.New("missing pattern; " + usage)
	}
	if args[0] == '"' {
		end := closing(args[1:], '"')
		if end < 0 {
			return errors.New(`the pattern has no closing "; write \" for a quote inside it`)
		}
		c.pattern, args = args[1:1+end], strings.TrimLeftFunc(args[2+end:], unicode.IsSpace)
	} else {
		c.pattern, args = cutWord(args)
	}
	if c.pattern == "" {
		return errors.New("empty pattern; " + usage)
	}
	var err error
	if c.glob, args, err = cutPath(args); err != nil {
		return err
	}
	if args != "" {
		return fmt.Errorf("unexpected %q after the glob; %s", clip(args, 40), usage)
	}
	if c.glob == "" {
		c.glob = "**"
	}
	return nil
}

// parseID reads a view id: 3 or [3].
func parseID(name, args string) (int, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(args, "["), "]")
	id, err := strconv.Atoi(s)
	if err != nil || id < 1 || strings.HasPrefix(s, "+") {
		if args == "" {
			return 0, fmt.Errorf("missing view id; write %s <id> with the number shown as [id] on the screen", name)
		}
		return 0, fmt.Errorf("bad view id %q; write %s <id> with the number shown as [id] on the screen", clip(args, 40), name)
	}
	return id, nil
}

// cutWord returns the first word of s and the rest, white space trimmed.
func cutWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

// cutPath reads a file name: a word, or a double-quoted string where \"
// and \\ stand for a quote and a backslash, and Go's other escapes (\n,
// \t, \x1b, \u2028, \xff, ...) for what they stand for where showPath
// writes them: a control character, a character that does not print, a
// byte that is not UTF-8. Any other backslash is itself, so a name such as
// a\x2db.mount (a systemd unit) reads as written.
func cutPath(s string) (p, rest string, err error) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if !strings.HasPrefix(s, `"`) {
		p, rest = cutWord(s)
		return p, rest, nil
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
				break
			}
			if n := escapeRun(&b, s[i:]); n > 0 {
				i += n - 1
				continue
			}
		case '"':
			if b.Len() == 0 {
				return "", "", errors.New(`empty file name ""`)
			}
			return b.String(), strings.TrimLeftFunc(s[i+1:], unicode.IsSpace), nil
		}
		b.WriteByte(s[i])
	}
	return "", "", errors.New(`the file name has no closing "`)
}

// escapeRun decodes the escapes at the start of s, which starts with a
// backslash, into b, where showPath would have written them, and returns
// how many bytes of s it read; 0 when the first escape stands for itself
// (b is then untouched). A character escape counts when it stands for a
// character that does not print; a run of byte escapes (\xc3\xa9) counts
// byte by byte for the bytes that are not UTF-8 together, while the bytes
// of a whole character (é here) are kept as written.
func escapeRun(b *strings.Builder, s string) int {
	var raw []byte   // the run's bytes, decoded
	var src []string // the text of each byte's escape
	read := 0
	for strings.HasPrefix(s[read:], `\`) {
		r, multibyte, tail, err := strconv.UnquoteChar(s[read:], '"')
		if err != nil {
			break
		}
		n := len(s) - read - len(tail)
		if multibyte || r < utf8.RuneSelf {
			if len(raw) > 0 {
				break // the byte run ends
			}
			if unicode.IsPrint(r) {
				return 0
			}
			b.WriteRune(r)
			return n
		}
		raw = append(raw, byte(r))
		src = append(src, s[read:read+n])
		read += n
	}
	if len(raw) == 0 {
		return 0
	}
	for i := 0; i < len(raw); {
		_, size := utf8.DecodeRune(raw[i:])
		if size > 1 {
			b.WriteString(strings.Join(src[i:i+size], ""))
		} else {
			b.WriteByte(raw[i])
		}
		i += size
	}
	return read
}

// cutPattern reads /pattern/ from the start of s. Inside, a backslash
// escapes the next character, so \/ is a slash that does not end it.
func cutPattern(which, s string) (pat, rest string, err error) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if s == "" {
		return "", "", fmt.Errorf("missing %s pattern; write view <file> /<start>/ /<end>/ [label]", which)
	}
	if s[0] != '/' {
		w, _ := cutWord(s)
		return "", "", fmt.Errorf("the %s pattern must be written between slashes, like /^def main/ (got %q)", which, clip(w, 40))
	}
	end := closing(s[1:], '/')
	if end < 0 {
		return "", "", fmt.Errorf(`the %s pattern %s has no closing slash; write \/ for a slash inside a pattern`, which, clip(s, 40))
	}
	pat = s[1 : 1+end]
	if pat == "" {
		return "", "", fmt.Errorf("empty %s pattern //; write a regular expression between the slashes", which)
	}
	return pat, strings.TrimLeftFunc(s[2+end:], unicode.IsSpace), nil
}

// closing returns the index in s of the first delim not escaped by a
// backslash, or -1.
func closing(s string, delim byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case delim:
			return i
		}
	}
	return -1
}

// String formats the command back into text that parses to the same
// command.
func (c command) String() string {
	var b strings.Builder
	b.WriteString(c.name)
	switch c.name {
	case cmdView:
		b.WriteString(" " + quotePath(c.path))
		switch c.kind {
		case byPatterns:
			b.WriteString(" /" + c.start + "/ to /" + c.end + "/")
		case byLines:
			b.WriteString(" " + strconv.Itoa(c.from) + "-")
			if c.to != 0 {
				b.WriteString(strconv.Itoa(c.to))
			}
		}
		if c.label != "" {
			b.WriteString(` "` + c.label + `"`)
		}
	case cmdEdit:
		fmt.Fprintf(&b, " %s %d-%d", quotePath(c.path), c.from, c.to)
	case cmdCreate, cmdUndo:
		b.WriteString(" " + quotePath(c.path))
	case cmdSearch:
		if hasSpace(c.pattern) || strings.HasPrefix(c.pattern, `"`) {
			b.WriteString(` "` + c.pattern + `"`)
		} else {
			b.WriteString(" " + c.pattern)
		}
		b.WriteString(" " + quotePath(c.glob))
	case cmdClose, cmdNext, cmdPrev:
		fmt.Fprintf(&b, " %d", c.id)
	}
	if c.hasContent {
		b.WriteString("\n" + c.content)
	}
	return b.String()
}

// quotePath quotes p when it would not read back as one word; a name
// showPath escapes is written as showPath writes it.
func quotePath(p string) string {
	if q := showPath(p); q != p {
		return q
	}
	if p != "" && !hasSpace(p) {
		return p
	}
	return `"` + p + `"`
}

func hasSpace(s string) bool { return strings.IndexFunc(s, unicode.IsSpace) >= 0 }

// clip cuts s to at most n bytes on a rune boundary, adding "..." when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

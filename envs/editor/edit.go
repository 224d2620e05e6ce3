package editor

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/unfold-dev/unfold/envs"
)

// maxMismatches is how many changed lines a refused edit lists.
const maxMismatches = 10

func (e *Editor) edit(_ context.Context, c command) (string, error) {
	p, err := e.resolvePath(c.path)
	if err != nil {
		return "", err
	}
	sp := showPath(p)
	if !c.hasContent {
		// The command line alone: a model that forgot the new lines, or
		// sent them in another call. Deleting takes an explicit empty
		// content.
		return "", fmt.Errorf("edit %s %d-%d has no new lines, so nothing was written: put the lines that replace lines %d-%d on the lines after the command. To delete the lines, end the command line with a newline and send nothing after it (in a fenced code block: one empty line between the command line and the closing fence)",
			quotePath(p), c.from, c.to, c.from, c.to)
	}
	e.mu.Lock()
	var mine []*view
	var host view
	var cut error     // the refusal of the first view that has the lines but cut one
	var crowded error // the refusal naming a narrow view the screen had no room for
	found := false
	for i, v := range e.views {
		if v.path != p {
			continue
		}
		mine = append(mine, v)
		crowded = cmp.Or(crowded, e.crowdedOut(i, c.from, c.to))
		if found || !v.shown.contains(c.from, c.to) {
			continue
		}
		// A view that showed the lines whole hosts the edit; another
		// that has them too may have cut one.
		if err := e.cutLines(*v, c.from, c.to); err != nil {
			cut = cmp.Or(cut, err)
			continue
		}
		host, found = *v, true
	}
	var visible []string
	total := 0 // the file's lines, when a view shows its last line
	for _, v := range mine {
		if v.shown.total > 0 && len(v.shown.lines) > 0 && v.shown.last() == v.shown.total {
			total = v.shown.total
		}
		if len(v.shown.lines) == 0 {
			visible = append(visible, fmt.Sprintf("none (view [%d] did not fit on the screen)", v.id))
			continue
		}
		visible = append(visible, fmt.Sprintf("%d-%d (view [%d])", v.shown.first, v.shown.last(), v.id))
	}
	e.mu.Unlock()
	if len(mine) == 0 {
		return "", noViewError(p, c)
	}
	if !found && crowded != nil && !tooLong(cut) {
		return "", crowded
	}
	if !found && cut != nil {
		return "", cut
	}
	if !found && total > 0 && c.to > total {
		return "", fmt.Errorf("%s has %s, so line %d is past its end; nothing was written. To add lines at the end, replace the last line with itself followed by the new lines: edit %s %d-%d, then the text of line %d and the new lines",
			sp, plural(total, "line"), c.to, quotePath(p), total, total, total)
	}
	if !found {
		return "", fmt.Errorf("Can only edit lines visible in a view: lines %d-%d of %s are not all inside one view.\n"+
			"Visible lines of %s: %s.\n"+
			"Edit lines inside one view, or open a view that shows these lines: view %s /<start>/ /<end>/",
			c.from, c.to, sp, sp, strings.Join(visible, ", "), quotePath(p))
	}

	if n := int64(len(c.content)); n > e.opt.maxFileSize {
		return "", fmt.Errorf("the new text is %s, more than %s, the editor's limit for one file; nothing was written", formatSize(n), formatSize(e.opt.maxFileSize))
	}
	target, err := realPath(e.fs, p)
	if err != nil {
		return "", fmt.Errorf("%w; nothing was written", err)
	}
	if err := e.mayWrite(target); err != nil {
		return "", fmt.Errorf("%w; nothing was written", err)
	}
	f, fi, err := openRegular(e.fs, target, true, e.opt.maxFileSize)
	if err != nil {
		return "", writeError(p, err)
	}
	defer f.Close()
	t, err := readOpen(f, fi, p, e.opt.maxFileSize, e.fallback)
	if err != nil {
		return "", fmt.Errorf("%w; nothing was written", err)
	}
	if msg := verify(t.data, host); msg != "" {
		return "", fmt.Errorf("%s", msg)
	}
	repl := contentLines(c.content)
	if err := t.codec.checkNew(repl); err != nil {
		return "", fmt.Errorf("%w; the edit was refused and %s was not changed", err, sp)
	}
	if !t.codec.roundTrips(t.raw, t.data) {
		return "", fmt.Errorf("%s has bytes that are not valid %s, which writing it back would change; the edit was refused and the file was not changed", sp, t.codec.label())
	}
	updated := splice(t.data, c.from, c.to, repl)
	raw, err := t.codec.encode(updated)
	if err != nil {
		return "", fmt.Errorf("the new text %w; the edit was refused and %s was not changed", err, sp)
	}
	if int64(len(raw)) > e.opt.maxFileSize {
		return "", fmt.Errorf("the edit would make %s %s, more than %s, the editor's limit for one file; nothing was written", sp, formatSize(int64(len(raw))), formatSize(e.opt.maxFileSize))
	}
	left, err := replaceContent(e.fs, target, f, fi, t.raw, raw)
	if errors.Is(err, errChanged) {
		return "", fmt.Errorf("%s changed while the edit was being written: another program wrote to it after the editor read it. The edit was refused and nothing was written, so that change is kept; the screen shows the file now: check the lines and edit again%s", sp, withNote(left))
	} else if err != nil {
		return "", fmt.Errorf("could not write %s: %v; the file was left as it was%s", sp, err, withNote(left))
	}
	e.mu.Lock()
	e.undo.record(undoStep{path: target, before: t.raw, after: sha256.Sum256(raw), from: c.from, to: c.to, lines: len(repl)})
	e.mu.Unlock()
	out := fmt.Sprintf("Edited %s lines %d-%d", sp, c.from, c.to)
	if len(repl) == 0 {
		out = fmt.Sprintf("Deleted %s lines %d-%d (the edit had no new lines); undo %s puts them back", sp, c.from, c.to, quotePath(p))
	}
	for _, note := range e.follow(p, t.data, updated, c.from, c.to, repl) {
		out += "\n" + note
	}
	if left != "" {
		out += "\n" + left
	}
	return out, nil
}

// cutLines refuses an edit of lines from..to of the view v when one of
// them is longer than v showed of it (see view.lineLimit): the rest of
// it was never seen, and an edit replaces whole lines. The refusal names
// the narrow view that shows the line whole, when one can: the view
// command that opens it, or, when it is open but the screen had no room
// for it, a view to close. e.mu must be held.
func (e *Editor) cutLines(v view, from, to int) error {
	sec := v.shown
	limit := sec.lineLimit()
	for n := from; n <= to; n++ {
		line := sec.lines[n-sec.first]
		if len(line) <= limit {
			continue
		}
		sp := showPath(v.path)
		if len(line) <= maxWholeLine {
			for i, o := range e.views {
				if o.path != v.path {
					continue
				}
				if err := e.crowdedOut(i, n, n); err != nil {
					return err
				}
			}
			return fmt.Errorf("line %d of %s has %d bytes and view [%d] showed the first %d of them; an edit replaces whole lines, so it would replace bytes never shown. The edit was refused and nothing was written. A view of at most %d lines by number shows each line whole, up to %s: view %s %d-%d shows this one, then edit it there",
				n, sp, len(line), v.id, limit, maxWholeLines, formatSize(maxWholeLine), quotePath(v.path), n, n)
		}
		return fmt.Errorf("line %d of %s has %d bytes, more than the %s a view shows of one line, so %w; an edit replaces whole lines, so it would replace bytes never shown. The edit was refused and nothing was written. Edit the lines around it, or change that line with a program that edits part of a line",
			n, sp, len(line), formatSize(maxWholeLine), errTooLong)
	}
	return nil
}

// errTooLong marks the refusal of a line no view shows whole.
var errTooLong = errors.New("no view shows the line whole")

// tooLong reports whether err refuses a line no view shows whole.
func tooLong(err error) bool { return errors.Is(err, errTooLong) }

// crowdedOut returns the refusal of an edit of lines from..to when the
// view e.views[i] is narrow, has them by its numbers, and was cut by the
// screen because the views before it filled it (see fit), or nil. Opening
// that view again would not help: the refusal names the widest view before
// it to close. e.mu must be held.
func (e *Editor) crowdedOut(i, from, to int) error {
	v := e.views[i]
	if v.lineLimit() != maxWholeLine || from < v.from || to > v.to || !v.shown.truncated || v.shown.contains(from, to) {
		return nil
	}
	var widest *view
	size := 0
	for _, o := range e.views[:i] {
		n := 0
		for _, l := range o.shown.lines {
			n += min(len(l), o.shown.lineLimit()) + 9 // the gutter and newline
		}
		if n > size {
			widest, size = o, n
		}
	}
	if widest == nil {
		return nil // the view alone is more than the screen holds
	}
	lines, are, them := fmt.Sprintf("lines %d-%d", from, to), "are", "them"
	if from == to {
		lines, are, them = fmt.Sprintf("line %d", from), "is", "it"
	}
	return fmt.Errorf("%s of %s %s in view [%d], but the views before it fill the screen's %d bytes, so the screen had no room to show %s, and lines not shown cannot be edited; nothing was written. Opening the view again would not help: close a view to make room, such as view [%d] (%s, about %s on the screen): close %d; then edit in view [%d]",
		lines, showPath(v.path), are, v.id, maxViewBytes, them, widest.id, showPath(widest.path), formatSize(int64(size)), widest.id, v.id)
}

// withNote returns note on a line of its own, or "".
func withNote(note string) string {
	if note == "" {
		return ""
	}
	return "\n" + note
}

// writeError explains why a file could not be opened for an edit.
func writeError(p string, err error) error {
	var fe *fileError
	if errors.As(err, &fe) && fe.problem != problemOther {
		return leftUndone(err, p, "nothing was written")
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("could not write %s: the system denied permission to open it for writing (its owner and mode, an ACL, or an attribute such as immutable); nothing was written and the file was left as it was. Check its permissions (ls -l %s) and have them changed if it should be edited", showPath(p), quotePath(p))
	}
	return fmt.Errorf("could not write %s: %v; the file was left as it was", showPath(p), errors.Unwrap(err))
}

// noViewError is the recovery help for an edit of a file no view shows
// (help-system design, "Error Recovery").
func noViewError(p string, c command) error {
	q := quotePath(p)
	return envs.Fail("Cannot edit - no view contains line %d\n\n"+
		"To edit a file:\n"+
		"  1. Create a view first: view %s /^def main/ /^$/\n"+
		"  2. See line numbers in the view on screen\n"+
		"  3. Edit using those lines: edit %s %d-%d\n\n"+
		"The view command is shown above in the Commands section.", c.from, q, q, c.from, c.to)
}

// verify compares the lines the view last showed with the file now, and
// returns a refusal showing expected and actual lines, or "".
func verify(data []byte, v view) string {
	type diff struct {
		line      int
		want, got string
		gone      bool // the file ends before this line
	}
	if len(data) == 0 && v.shown.first == 1 && len(v.shown.lines) == 1 && v.shown.lines[0] == "" {
		return "" // an empty file shows one empty line
	}
	var diffs []diff
	off := lineStart(data, v.shown.first)
	for i, want := range v.shown.lines {
		n := v.shown.first + i
		if off < 0 || off >= len(data) {
			diffs = append(diffs, diff{line: n, want: want, gone: true})
			off = -1
			continue
		}
		end := lineEnd(data, off)
		if got := string(lineText(data, off, end)); got != want {
			diffs = append(diffs, diff{line: n, want: want, got: got})
		}
		off = end + 1
	}
	if len(diffs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The file changed since view [%d] showed it: the edit was refused and %s was not changed.\n", v.id, showPath(v.path))
	b.WriteString("Expected (as the view showed them):")
	shown := diffs[:min(len(diffs), maxMismatches)]
	for _, d := range shown {
		writeNumbered(&b, d.line, d.want)
	}
	b.WriteString("\nActual (in the file now):")
	for _, d := range shown {
		if d.gone {
			writeNumbered(&b, d.line, "[end of file]")
			continue
		}
		writeNumbered(&b, d.line, d.got)
	}
	if more := len(diffs) - len(shown); more > 0 {
		fmt.Fprintf(&b, "\n... and %d more changed lines", more)
	}
	b.WriteString("\nThe screen now shows the current lines; check them and edit again.")
	return b.String()
}

// writeNumbered writes a newline and a line numbered as the screen numbers
// it.
func writeNumbered(b *strings.Builder, n int, text string) {
	num := strconv.Itoa(n)
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", max(0, 7-len(num))))
	b.WriteString(num)
	if text != "" {
		b.WriteString("  ")
		writeLine(b, text, maxShownLine)
	}
}

// contentLines splits edit content into lines. A final newline ends the
// last line rather than adding an empty one; a carriage return before a
// newline is dropped (the file's own line ending is used).
func contentLines(content string) []string {
	if content == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// lineStart returns the offset where line n (1-based) starts, or -1 when
// the file has fewer lines.
func lineStart(data []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	if off >= len(data) && n == 1 && off > 0 {
		return -1
	}
	return off
}

// splice replaces lines from..to (1-based, inclusive, present in data) with
// repl. The new lines end like the last line they replace (or, when that
// line had no ending, like the file's first line); every other byte is
// kept, and so is a missing final newline.
func splice(data []byte, from, to int, repl []string) []byte {
	if len(data) == 0 {
		// An empty file's one line has no ending; new lines get one each.
		if len(repl) == 0 {
			return nil
		}
		return []byte(strings.Join(repl, "\n") + "\n")
	}
	startOff := lineStart(data, from)
	lastOff := lineStart(data, to)
	lastEnd := lineEnd(data, lastOff)
	eol := lineEnding(data, lastOff, lastEnd)
	after := min(lastEnd+1, len(data))
	newEOL := eol
	if newEOL == "" {
		newEOL = "\n"
		if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
			newEOL = "\r\n"
		}
	}
	var b bytes.Buffer
	b.Grow(len(data) + 64*len(repl))
	b.Write(data[:startOff])
	for i, l := range repl {
		b.WriteString(l)
		if i < len(repl)-1 || eol != "" {
			b.WriteString(newEOL)
		}
	}
	if len(repl) == 0 && eol == "" && startOff > 0 {
		// The deleted lines ended the file without a final newline: the
		// line now last keeps that state.
		out := bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
		out = bytes.TrimSuffix(out, []byte{'\r'})
		b.Truncate(len(out))
	}
	b.Write(data[after:])
	return b.Bytes()
}

// follow updates the patterns of every view of p whose boundary line the
// edit of from..to (repl replacing them; old and updated the file's bytes
// before and after) changed: the pattern becomes the new line's literal
// text, so the view keeps following it. It returns one note per change.
func (e *Editor) follow(p string, old, updated []byte, from, to int, repl []string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var notes []string
	k := len(repl)
	for _, v := range e.views {
		sh := v.shown
		if v.path != p || len(sh.lines) == 0 {
			continue
		}
		if v.kind != byPatterns {
			v.shiftLines(from, to, k)
			v.reshow(updated, sh.encoding)
			continue
		}
		if s := sh.first; s >= from && s <= to {
			text, line, ok := "", 0, false
			if k > 0 {
				idx := min(s-from, k-1)
				text, line, ok = repl[idx], from+idx, true
			} else if t, exists := lineAt(old, to+1); exists {
				text, line, ok = t, from, true
			}
			if ok && text != sh.lines[0] {
				if np, err := compilePattern("start", literalPattern(text)); err == nil {
					v.start = np
					v.index = matchIndex(updated, np, line)
					notes = append(notes, fmt.Sprintf("View [%d] now starts at /%s/ (the edit changed its first line)", v.id, np.src))
				}
			}
		}
		if l := sh.last(); !sh.truncated && l >= from && l <= to {
			text, ok := "", false
			if k > 0 {
				text, ok = repl[max(0, k-1-(to-l))], true
			} else if from-1 >= sh.first {
				text, ok = lineAt(old, from-1)
			}
			if ok && text != sh.lines[len(sh.lines)-1] {
				if np, err := compilePattern("end", literalPattern(text)); err == nil {
					v.end = np
					notes = append(notes, fmt.Sprintf("View [%d] now ends at /%s/ (the edit changed its last line)", v.id, np.src))
				}
			}
		}
	}
	return notes
}

// shiftLines moves a view by lines after lines from..to were replaced by
// k lines: lines below the edit move by the change in length; a view the
// edit overlaps keeps its first line (or starts where the edit does) and
// ends where its last line now is (or where the new lines end). A view of
// the whole file stays as it is.
func (v *view) shiftLines(from, to, k int) {
	if v.kind != byLines {
		return
	}
	delta := k - (to - from + 1)
	switch {
	case to < v.from:
		v.from += delta
		if v.to != 0 {
			v.to += delta
		}
	case v.to != 0 && from > v.to:
	default:
		if from < v.from {
			v.from = from
		}
		if v.to != 0 {
			if v.to > to {
				v.to += delta
			} else {
				v.to = from + k - 1
			}
			v.to = max(v.to, v.from)
		}
	}
	v.from = max(v.from, 1)
}

// reshow sets what a view by lines or of the whole file shows to its
// lines in data, the file's text as the editor just wrote it, so the next
// edit is checked against them and the next screen finds them.
func (v *view) reshow(data []byte, encoding string) {
	from, to := v.from, v.to
	if v.kind == wholeFile {
		from, to = 1, 0
	}
	if sec, ok := resolveLines(data, from, to); ok {
		sec.encoding = encoding
		// Until a screen shows them, the lines count as shown as far as
		// both the view before the edit and the view now show a line.
		sec.limit = min(v.shown.lineLimit(), v.lineLimit())
		v.shown = sec
	}
}

// lineAt returns the text of line n (1-based) without its ending.
func lineAt(data []byte, n int) (string, bool) {
	off := lineStart(data, n)
	if off < 0 || off >= len(data) {
		return "", false
	}
	return string(lineText(data, off, lineEnd(data, off))), true
}

// matchIndex returns how many lines before line n match p: the index of
// line n among p's matches.
func matchIndex(data []byte, p *pattern, n int) int {
	limit := lineStart(data, n)
	if limit < 0 {
		limit = len(data)
	}
	count := 0
	for off := 0; ; count++ {
		o := p.next(nil, data, off, limit) // a literal pattern: cheap
		if o < 0 {
			return count
		}
		off = lineEnd(data, o) + 1
	}
}

package editor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// state renders the views for the screen, re-reading each file once,
// within maxViewBytes. A screen counted as shown (not a preview) records
// what each view drew, for edits to be checked against, and removes the
// views that could not be shown.
func (e *Editor) state() string {
	commit := !e.preview // drawMu is held: see draw
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.views) == 0 {
		return "Views:\n  (no views)"
	}
	type read struct {
		t   *text
		err error
	}
	files := make(map[string]read, len(e.views))
	wk := newWork(context.Background(), matchTime)
	var b, vb strings.Builder
	var ends []int
	b.WriteString("Views:")
	left := maxViewBytes
	kept := make([]*view, 0, len(e.views))
	for i, v := range e.views {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		r, ok := files[v.path]
		if !ok {
			t, err := readText(e.fs, v.path, e.opt.maxFileSize, e.fallback)
			r = read{t, err}
			files[v.path] = r
		}
		if r.err != nil {
			v.header(&b)
			b.WriteByte(' ')
			b.WriteString(markerOf(r.err))
			if !commit {
				kept = append(kept, v)
			}
			continue
		}
		// A preview works on a copy: the view, and what it showed, stay.
		w := *v
		sec, ok := e.resolveView(&w, r.t, wk)
		if wk.ranOut() && w.kind == byPatterns {
			// The view shows its lines shown last, marked, until a
			// screen has the time to match its patterns.
			w = *v
			vb.Reset()
			ends = w.render(&vb, e.opt.gutter, ends[:0])
			text := vb.String()
			mark := "\n    " + slowMarker
			text = text[:ends[0]] + mark + text[ends[0]:]
			for i := range ends {
				ends[i] += len(mark)
			}
			left -= fit(&b, &w, text, ends, left)
			if commit {
				*v = w
			}
			kept = append(kept, v)
			continue
		}
		if !ok {
			w.header(&b)
			if w.kind == byPatterns {
				b.WriteString(" [BROKEN: patterns not found]")
			} else {
				fmt.Fprintf(&b, " [BROKEN: line %d is past the end of the file, which has %d lines]", w.from, sec.total)
			}
			if !commit {
				kept = append(kept, v)
			}
			continue
		}
		w.index, w.shown = sec.index, sec
		vb.Reset()
		ends = w.render(&vb, e.opt.gutter, ends[:0])
		left -= fit(&b, &w, vb.String(), ends, left)
		if commit {
			*v = w
		}
		kept = append(kept, v)
	}
	e.views = kept
	return b.String()
}

// fit writes the view w, rendered as text, to b within left bytes, and
// returns how many it wrote. ends[0] is where the text's header line
// ends, ends[i] where its line i ends. A view that does not fit is cut
// after the last line that does, with a note naming the view command that
// shows the lines cut (the header and the note are written even when they
// alone do not fit: they are short); w then shows only the lines written.
func fit(b *strings.Builder, w *view, text string, ends []int, left int) int {
	if len(text) <= left {
		b.WriteString(text)
		return len(text)
	}
	n := 0 // lines that fit
	if len(ends) == len(w.shown.lines)+1 && ends[len(ends)-1]+5 <= left {
		// The lines fit; the note after them is short.
		b.WriteString(text)
		return len(text)
	}
	// The note is longest for the last line's number.
	room := left - len(cutNote(w, w.shown.last())) - 5
	for n+1 < len(ends) && ends[n+1] <= room {
		n++
	}
	note := cutNote(w, w.shown.first+n)
	b.WriteString(text[:ends[n]])
	b.WriteString("\n    ")
	b.WriteString(note)
	w.shown.lines = w.shown.lines[:n]
	w.shown.truncated = true
	return ends[n] + len(note) + 5
}

// cutNote says that the screen has no room for a view's lines from
// line next on, and which view command shows them.
func cutNote(w *view, next int) string {
	last := w.shown.last()
	return fmt.Sprintf("[TRUNCATED: the views fill the screen's %d bytes, so lines %d-%d of this view are not shown and cannot be edited: close a view, or view %s %d-%d shows them]",
		maxViewBytes, next, last, quotePath(w.path), next, last)
}

// resolveView finds what v shows of the file t now. A view by lines whose
// lines the file no longer has at its numbers, because lines were added or
// removed above them outside the editor, moves to where those lines are
// now, when they are somewhere. ok is false when the view cannot be shown,
// or its patterns ran out of w (see work.ranOut).
func (e *Editor) resolveView(v *view, t *text, w *work) (sec section, ok bool) {
	switch v.kind {
	case byPatterns:
		sec, ok = resolve(w, t.data, v.start, v.end, v.index, false)
	case byLines:
		if sh := v.shown; len(sh.lines) > 0 {
			off := lineStart(t.data, sh.first)
			if off < 0 || !linesAt(t.data, off, sh.lines) {
				if at, found := relocate(t.data, sh.lines, sh.first); found {
					shift := at - sh.first
					v.from += shift
					if v.to != 0 {
						v.to += shift
					}
				}
			}
		}
		sec, ok = resolveLines(t.data, v.from, v.to)
	case wholeFile:
		sec, ok = resolveLines(t.data, 1, 0)
	}
	sec.encoding = t.codec.label()
	sec.limit = v.lineLimit()
	return sec, ok
}

// markerOf returns the screen mark for a read error.
func markerOf(err error) string {
	var fe *fileError
	if errors.As(err, &fe) {
		return fe.marker()
	}
	return "[ERROR: " + err.Error() + "]"
}

// find returns the view with id, or nil. e.mu must be held.
func (e *Editor) find(id int) *view {
	for _, v := range e.views {
		if v.id == id {
			return v
		}
	}
	return nil
}

// noSuchView explains a view id that is not open. e.mu must be held.
func (e *Editor) noSuchView(id int) error {
	if len(e.views) == 0 {
		return fmt.Errorf("no view [%d]: no views are open; open one with view <file> /<start>/ /<end>/", id)
	}
	ids := make([]string, len(e.views))
	for i, v := range e.views {
		ids[i] = "[" + strconv.Itoa(v.id) + "]"
	}
	return fmt.Errorf("no view [%d]; open views: %s", id, strings.Join(ids, ", "))
}

// slowMarker follows a view whose patterns a screen ran out of time or
// work for.
const slowMarker = "[SLOW: matching the patterns took too long on this file, so the view is not shown now; its lines shown last can still be edited. Use a smaller pattern (fewer repeats, shorter alternatives), or a view by lines (view <file> <start>-<end>)]"

// tooCostly explains a command whose patterns ran out of work (see work),
// or that was interrupted.
func tooCostly(ctx context.Context, p string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while matching the patterns in %s: %v", showPath(p), context.Cause(ctx))
	}
	return fmt.Errorf("matching the patterns takes too long on %s (its lines are long, or the patterns large): use a smaller pattern (fewer repeats, shorter alternatives), or a view by lines (view %s <start>-<end>)", showPath(p), quotePath(p))
}

func (e *Editor) view(ctx context.Context, c command) (string, error) {
	p, err := e.cleanPath(c.path)
	if err != nil {
		return "", err
	}
	if fi, err := e.fs.Stat(p); err == nil && fi.IsDir() {
		if c.kind != wholeFile {
			if _, err := e.resolvePath(c.path); err != nil {
				return "", err
			}
			return "", fmt.Errorf("%s is a directory; view %s lists it, and patterns or line numbers go with files", showPath(p), quotePath(p))
		}
		return e.listDir(ctx, p)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w; view not created", classify(p, err))
	}
	if p, err = e.resolvePath(c.path); err != nil {
		return "", err
	}
	v := &view{path: p, kind: c.kind, from: c.from, to: c.to, label: c.label}
	if c.kind == byPatterns {
		if v.start, err = compilePattern("start", c.start); err != nil {
			return "", err
		}
		if v.end, err = compilePattern("end", c.end); err != nil {
			return "", err
		}
	}
	t, err := readText(e.fs, p, e.opt.maxFileSize, e.fallback)
	if err != nil {
		return "", fmt.Errorf("%w; view not created", err)
	}
	wk := newWork(ctx, matchTime)
	sec, ok := e.resolveView(v, t, wk)
	if wk.ranOut() {
		return "", tooCostly(ctx, p)
	}
	if !ok {
		if c.kind == byPatterns {
			return "", fmt.Errorf("no line of %s matches the start pattern /%s/; view not created", showPath(p), c.start)
		}
		return "", fmt.Errorf("%s has %s, so line %d is past its end; view not created", showPath(p), plural(sec.total, "line"), c.from)
	}
	v.shown = sec
	e.mu.Lock()
	v.id = e.nextID
	e.nextID++
	e.views = append(e.views, v)
	var closed *view
	if len(e.views) > maxViews {
		closed = e.views[0]
		e.views = slices.Delete(e.views, 0, 1)
	}
	e.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Added view [%d] %s", v.id, showPath(p))
	v.describe(&b)
	if sec.encoding != "" {
		fmt.Fprintf(&b, " [%s]", sec.encoding)
	}
	if closed != nil {
		fmt.Fprintf(&b, "\nClosed view [%d] %s: at most %d views are kept, so the oldest was closed", closed.id, showPath(closed.path), maxViews)
	}
	return b.String(), nil
}

func (e *Editor) close(_ context.Context, c command) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, v := range e.views {
		if v.id == c.id {
			e.views = slices.Delete(e.views, i, i+1)
			return fmt.Sprintf("Closed view [%d]", c.id), nil
		}
	}
	return "", e.noSuchView(c.id)
}

func (e *Editor) nextMatch(ctx context.Context, c command) (string, error) {
	return e.move(ctx, c, +1)
}

func (e *Editor) prevMatch(ctx context.Context, c command) (string, error) {
	return e.move(ctx, c, -1)
}

// move shows the view's next (step +1) or previous (-1) match, wrapping
// around.
func (e *Editor) move(ctx context.Context, c command, step int) (string, error) {
	e.mu.Lock()
	v := e.find(c.id)
	if v == nil {
		err := e.noSuchView(c.id)
		e.mu.Unlock()
		return "", err
	}
	if v.kind != byPatterns {
		e.mu.Unlock()
		return "", fmt.Errorf("view [%d] shows line numbers, not the matches of a pattern; %s moves between the matches of a view's start pattern", c.id, c.name)
	}
	p, start, end, index := v.path, v.start, v.end, v.index
	e.mu.Unlock()
	t, err := readText(e.fs, p, e.opt.maxFileSize, e.fallback)
	if err != nil {
		return "", fmt.Errorf("view [%d]: %w", c.id, err)
	}
	wk := newWork(ctx, matchTime)
	sec, ok := resolve(wk, t.data, start, end, index+step, true)
	if wk.ranOut() {
		return "", fmt.Errorf("view [%d]: %w", c.id, tooCostly(ctx, p))
	}
	if !ok {
		return "", fmt.Errorf("view [%d]: no line of %s matches /%s/ any more; the screen shows it broken and removes it", c.id, showPath(p), start.src)
	}
	sec.encoding = t.codec.label()
	e.mu.Lock()
	defer e.mu.Unlock()
	if v = e.find(c.id); v == nil {
		return "", e.noSuchView(c.id)
	}
	v.index, v.shown = sec.index, sec
	return "Showing " + sec.matchWords(), nil
}

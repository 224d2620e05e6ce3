package editor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
)

// maxUndoLevels is how many edits of one file undo can take back.
const maxUndoLevels = 20

// undoStep is one edit the editor made: the file's bytes before it, and a
// digest of the bytes it wrote, to tell whether the file changed since.
type undoStep struct {
	path   string // the file written, after symbolic links
	before []byte
	after  [sha256.Size]byte
	// from and to are the lines the edit replaced, by lines new ones.
	from, to, lines int
}

// undoLog keeps the undo steps of every file, oldest first, within a
// limit on the bytes they hold. The zero value with a limit of 0 keeps
// nothing. The Editor's mutex guards it.
type undoLog struct {
	limit int64
	size  int64
	steps []undoStep
}

// record adds a step. When the step alone is over the limit, it keeps
// none for that file: the file's earlier steps could no longer be undone
// in order. Past maxUndoLevels for the file, or past the limit, the oldest
// steps go.
func (l *undoLog) record(s undoStep) {
	if int64(len(s.before)) > l.limit {
		l.drop(func(o undoStep) bool { return o.path == s.path })
		return
	}
	l.steps = append(l.steps, s)
	l.size += int64(len(s.before))
	if l.count(s.path) > maxUndoLevels {
		first := true
		l.drop(func(o undoStep) bool {
			if first && o.path == s.path {
				first = false
				return true
			}
			return false
		})
	}
	for l.size > l.limit && len(l.steps) > 0 {
		l.size -= int64(len(l.steps[0].before))
		l.steps = l.steps[1:]
	}
}

// drop removes the steps that gone reports true for.
func (l *undoLog) drop(gone func(undoStep) bool) {
	kept := l.steps[:0]
	for _, s := range l.steps {
		if gone(s) {
			l.size -= int64(len(s.before))
			continue
		}
		kept = append(kept, s)
	}
	clear(l.steps[len(kept):])
	l.steps = kept
}

// removeAt removes the step at index i.
func (l *undoLog) removeAt(i int) {
	l.size -= int64(len(l.steps[i].before))
	l.steps = slices.Delete(l.steps, i, i+1)
}

// last returns the index of the newest step of path, or -1.
func (l *undoLog) last(path string) int {
	for i := len(l.steps) - 1; i >= 0; i-- {
		if l.steps[i].path == path {
			return i
		}
	}
	return -1
}

// count returns how many steps path has.
func (l *undoLog) count(path string) int {
	n := 0
	for _, s := range l.steps {
		if s.path == path {
			n++
		}
	}
	return n
}

func (e *Editor) undoEdit(_ context.Context, c command) (string, error) {
	p, err := e.resolvePath(c.path)
	if err != nil {
		return "", err
	}
	sp := showPath(p)
	target, err := realPath(e.fs, p)
	if err != nil {
		return "", fmt.Errorf("%w; nothing was restored", err)
	}
	e.mu.Lock()
	i := e.undo.last(target)
	var step undoStep
	if i >= 0 {
		step = e.undo.steps[i]
	}
	e.mu.Unlock()
	if i < 0 {
		return "", fmt.Errorf("nothing to undo for %s: the editor has not edited it since it started, or its earlier contents were dropped to keep undo within %s", sp, formatSize(e.undo.limit))
	}
	f, fi, err := openRegular(e.fs, target, true, e.opt.maxFileSize)
	if err != nil {
		return "", leftUndone(err, p, "nothing was restored")
	}
	defer f.Close()
	cur, err := readAll(f, fi.Size(), p, e.opt.maxFileSize)
	if err != nil {
		return "", fmt.Errorf("%w; nothing was restored", err)
	}
	if err := e.mayWrite(target); err != nil {
		return "", fmt.Errorf("%w; nothing was restored", err)
	}
	if sha256.Sum256(cur) != step.after {
		return "", fmt.Errorf("%s changed since the editor's last edit of it (lines %d-%d), so undo would lose those changes; nothing was restored. View the file to see it as it is now", sp, step.from, step.to)
	}
	left, err := replaceContent(e.fs, target, f, fi, cur, step.before)
	if errors.Is(err, errChanged) {
		return "", fmt.Errorf("%s changed while undo was writing it: another program wrote to it after the editor read it. Nothing was restored, so that change is kept; view the file to see it as it is now%s", sp, withNote(left))
	} else if err != nil {
		return "", fmt.Errorf("could not write %s: %v; the file was left as it was%s", sp, err, withNote(left))
	}
	restored, rerr := decodeText(step.before, fi, p, e.fallback)
	e.mu.Lock()
	if j := e.undo.last(target); j >= 0 && e.undo.steps[j].after == step.after {
		e.undo.removeAt(j)
	}
	remaining := e.undo.count(target)
	for _, v := range e.views {
		if v.path == p && v.kind != byPatterns {
			// The restored lines take the place of the edit's new ones.
			v.shiftLines(step.from, step.from+step.lines-1, step.to-step.from+1)
			if rerr == nil {
				v.reshow(restored.data, restored.codec.label())
			}
		}
	}
	e.mu.Unlock()
	return fmt.Sprintf("Undid the edit of %s lines %d-%d: the file is as it was before it (%s of it left to undo)%s", sp, step.from, step.to, plural(remaining, "earlier edit"), withNote(left)), nil
}

package editor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// maxSearchLine is how many bytes of a matching line a search shows.
const maxSearchLine = 200

// maxSearchDepth is how deep a search goes below the root: a directory
// this many levels deep is not entered, and the response counts it.
const maxSearchDepth = 256

// errStopWalk ends a walk that reached the file limit.
var errStopWalk = errors.New("file limit reached")

// searcher holds one search: what it looks for, what it found and what it
// skipped. The walks hand it the files in path order.
type searcher struct {
	pat        *pattern
	work       *work // skips lines too costly to match; ends with the command
	glob       *glob
	fallback   *namedEncoding
	limit      int64 // largest file read
	maxMatches int
	maxFiles   int

	matched                            int // files matching the glob
	read                               int // files read and searched
	stopped                            bool
	binary, large, special, unreadable int
	unreadableDirs                     int // directories that could not be listed
	tooDeep                            int // directories maxSearchDepth deep, not entered
	ignored                            int // folders and files left out by ignore rules, .git aside

	total, shown int
	out          strings.Builder
}

// take counts a file that matches the glob, or reports false when the
// file limit is reached.
func (s *searcher) take() bool {
	if s.matched >= s.maxFiles {
		s.stopped = true
		return false
	}
	s.matched++
	return true
}

// leftOut counts a path an ignore rule left out; .git folders go
// without saying.
func (s *searcher) leftOut(p string) {
	if path.Base(p) != ".git" {
		s.ignored++
	}
}

// failed counts a file that could not be read.
func (s *searcher) failed(err error) {
	var fe *fileError
	switch {
	case errors.As(err, &fe) && fe.problem == problemTooLarge:
		s.large++
	case errors.As(err, &fe) && fe.problem == problemSpecial:
		s.special++
	case errors.As(err, &fe) && fe.problem == problemBinary:
		s.binary++
	default:
		s.unreadable++
	}
}

// scan searches the file name, whose bytes are raw (only read during the
// call).
func (s *searcher) scan(name string, raw []byte) {
	t, err := decodeText(raw, nil, name, s.fallback)
	if err != nil {
		s.failed(err)
		return
	}
	s.read++
	data := t.data
	cur, line := 0, 1
	for off := 0; ; {
		o := s.pat.next(s.work, data, off, len(data))
		if o < 0 {
			break
		}
		end := lineEnd(data, o)
		s.total++
		if s.shown < s.maxMatches {
			line += bytes.Count(data[cur:o], []byte{'\n'})
			cur = o
			s.shown++
			s.out.WriteString("\n  ")
			s.out.WriteString(showPath(name))
			s.out.WriteByte(':')
			s.out.WriteString(strconv.Itoa(line))
			s.out.WriteString(": ")
			writeLine(&s.out, string(lineText(data, o, end)), maxSearchLine)
		}
		off = end + 1
	}
}

func (e *Editor) search(ctx context.Context, c command) (string, error) {
	pat, err := compilePattern("search", c.pattern)
	if err != nil {
		return "", err
	}
	g, err := compileGlob(c.glob)
	if err != nil {
		return "", err
	}
	wk := newWork(ctx, 0)
	wk.skip = true
	s := &searcher{pat: pat, work: wk, glob: g, fallback: e.fallback, limit: e.opt.maxFileSize, maxMatches: e.opt.maxMatches, maxFiles: e.opt.maxFiles}
	var ig, probe ignorer
	ig.pushFrom(e.fs, ".")
	// A glob that names an ignored folder searches it: no rule applies.
	probe.pushAncestors(e.fs, path.Dir(g.base))
	ig.off = probe.ignoresAny(g.base)
	err = e.walkFast(ctx, s, &ig)
	if errors.Is(err, errNoFastWalk) {
		err = e.walkFs(ctx, s, &ig, ".", 0)
	}
	if errors.Is(err, errStopWalk) {
		err = nil
	}
	if err == nil && ctx.Err() != nil {
		// The walk ended with the file it was in cut short.
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("search interrupted after %s: %v", plural(s.read, "file"), context.Cause(ctx))
		}
		return "", fmt.Errorf("cannot list the project's files: %v", err)
	}
	var b strings.Builder
	if s.total == 0 {
		fmt.Fprintf(&b, "No matches for \"%s\" in %s", c.pattern, countFiles(s.matched, c.glob))
	} else {
		b.WriteString("Matches:")
		b.WriteString(s.out.String())
		if more := s.total - s.shown; more > 0 {
			fmt.Fprintf(&b, "\n  ... and %d more matches (showing the first %d; narrow the pattern or the glob)", more, s.shown)
		}
	}
	var skipped []string
	if s.binary > 0 {
		skipped = append(skipped, plural(s.binary, "binary file"))
	}
	if s.large > 0 {
		skipped = append(skipped, plural(s.large, "file")+" larger than "+formatSize(e.opt.maxFileSize))
	}
	if s.special > 0 {
		skipped = append(skipped, plural(s.special, "special file")+" (FIFO, socket or device)")
	}
	if s.unreadable > 0 {
		skipped = append(skipped, plural(s.unreadable, "unreadable file"))
	}
	if s.unreadableDirs > 0 {
		skipped = append(skipped, pluralForms(s.unreadableDirs, "unreadable directory", "unreadable directories"))
	}
	if s.tooDeep > 0 {
		skipped = append(skipped, fmt.Sprintf("%s %d levels deep (the search goes no deeper)", pluralForms(s.tooDeep, "directory", "directories"), maxSearchDepth))
	}
	if s.matched > 0 || s.ignored > 0 || s.unreadableDirs > 0 || s.tooDeep > 0 {
		fmt.Fprintf(&b, "\nSearched %s", plural(s.read, "file"))
		if len(skipped) > 0 {
			b.WriteString("; skipped " + strings.Join(skipped, ", "))
		}
		if s.ignored > 0 {
			fmt.Fprintf(&b, "; left out %s (node_modules, .gitignore)", plural(s.ignored, "ignored path"))
		}
	}
	if s.stopped {
		fmt.Fprintf(&b, "\nStopped after %d files; narrow the glob to search the rest", e.opt.maxFiles)
	}
	if wk.skipped > 0 {
		fmt.Fprintf(&b, "\nNot searched: %s too long for this pattern to match in reasonable time; a smaller pattern (fewer repeats, shorter alternatives) searches them", plural(wk.skipped, "line"))
	}
	return b.String(), nil
}

// countFiles says how many files matched the glob, for a search without
// matches.
func countFiles(n int, glob string) string {
	if n == 0 {
		return "files matching " + showPath(glob) + " (no file matches the glob)"
	}
	return plural(n, "file") + " matching " + showPath(glob)
}

// plural formats n and a noun, adding an s unless n is 1.
func plural(n int, noun string) string {
	return pluralForms(n, noun, noun+"s")
}

// pluralForms formats n and the noun's form one or many, for a noun whose
// plural is not made by adding an s.
func pluralForms(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

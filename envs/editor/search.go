package editor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/afero"
)

// maxSearchLine is how many bytes of a matching line a search shows.
const maxSearchLine = 200

// errStopWalk ends a walk that reached the file limit.
var errStopWalk = errors.New("file limit reached")

func (e *Editor) search(ctx context.Context, c command) (string, error) {
	pat, err := compilePattern("search", c.pattern)
	if err != nil {
		return "", err
	}
	g, err := compileGlob(c.glob)
	if err != nil {
		return "", err
	}
	files, stopped, err := e.listFiles(ctx, g)
	if err != nil {
		return "", err
	}
	var (
		b                         strings.Builder
		total, shown              int
		binary, large, unreadable int
	)
	b.WriteString("Matches:")
	for i, name := range files {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("search interrupted after %d of %d files: %v", i, len(files), context.Cause(ctx))
		}
		data, _, err := readText(e.fs, name, e.opt.maxFileSize)
		var fe *fileError
		switch {
		case err == nil:
		case errors.As(err, &fe) && fe.problem == problemBinary:
			binary++
			continue
		case errors.As(err, &fe) && fe.problem == problemTooLarge:
			large++
			continue
		default:
			unreadable++
			continue
		}
		cur, line := 0, 1
		for off := 0; ; {
			o := pat.next(data, off, len(data))
			if o < 0 {
				break
			}
			end := lineEnd(data, o)
			total++
			if shown < e.opt.maxMatches {
				line += bytes.Count(data[cur:o], []byte{'\n'})
				cur = o
				shown++
				fmt.Fprintf(&b, "\n  %s:%d: ", strings.ToValidUTF8(name, "\uFFFD"), line)
				writeLine(&b, string(lineText(data, o, end)), maxSearchLine)
			}
			off = end + 1
		}
	}
	var out string
	if total == 0 {
		out = fmt.Sprintf("No matches for \"%s\" in %s", c.pattern, countFiles(len(files), c.glob))
	} else {
		if more := total - shown; more > 0 {
			fmt.Fprintf(&b, "\n  ... and %d more matches (showing the first %d; narrow the pattern or the glob)", more, shown)
		}
		out = b.String()
	}
	var skipped []string
	if binary > 0 {
		skipped = append(skipped, plural(binary, "binary file"))
	}
	if large > 0 {
		skipped = append(skipped, plural(large, "file")+" larger than "+formatSize(e.opt.maxFileSize))
	}
	if unreadable > 0 {
		skipped = append(skipped, plural(unreadable, "unreadable file"))
	}
	if len(skipped) > 0 {
		out += "\nSkipped: " + strings.Join(skipped, ", ")
	}
	if stopped {
		out += fmt.Sprintf("\nStopped after %d files; narrow the glob to search the rest", e.opt.maxFiles)
	}
	return out, nil
}

// listFiles returns the regular files under the root matching g, sorted,
// skipping .git directories. stopped reports that the file limit cut the
// list short.
func (e *Editor) listFiles(ctx context.Context, g *glob) (files []string, stopped bool, err error) {
	err = afero.Walk(e.fs, ".", func(p string, fi fs.FileInfo, err error) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err != nil {
			if p == "." {
				return err
			}
			if fi != nil && fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		p = filepath.ToSlash(p)
		if fi.IsDir() {
			if path.Base(p) == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// A link counts when it leads to a regular file inside the root.
			if target, err := e.fs.Stat(p); err != nil || !target.Mode().IsRegular() {
				return nil
			}
		} else if !fi.Mode().IsRegular() {
			return nil
		}
		if !g.match(p) {
			return nil
		}
		if len(files) >= e.opt.maxFiles {
			stopped = true
			return errStopWalk
		}
		files = append(files, p)
		return nil
	})
	if errors.Is(err, errStopWalk) {
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("search interrupted: %v", context.Cause(ctx))
		}
		return nil, false, fmt.Errorf("cannot list the project's files: %v", err)
	}
	sort.Strings(files)
	return files, stopped, nil
}

// countFiles says how many files matched the glob, for a search without
// matches.
func countFiles(n int, glob string) string {
	if n == 0 {
		return "files matching " + glob + " (no file matches the glob)"
	}
	return plural(n, "file") + " matching " + glob
}

// plural formats n and a noun, adding an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

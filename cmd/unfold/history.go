package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/renameio/v2"
)

// maxHistoryFile bounds the history file read: the REPL reads it whole at
// the start, to recall its lines, and again on exit, to add the new ones.
const maxHistoryFile = 64 << 20

// historyFile is where the REPL keeps the lines typed, for the next start.
// The file is never written from what was recalled: on exit the lines
// typed are added to what the file holds then, byte for byte, so lines
// that cannot be recalled (not UTF-8, too long), lines past what the
// editor recalls, and lines another session added are all kept.
type historyFile struct {
	path  string   // as given
	added []string // the lines typed, to add on exit
}

// maxAdded bounds the lines typed that one session adds to the file; past
// it the oldest are dropped, as the editor's own history drops them.
const maxAdded = 10_000

// load reads the file and returns the lines to recall: its last lines
// that are UTF-8 text of at most maxHistoryLine bytes. A missing file has
// none. The error says what could not be recalled; it is a warning, and
// the file is left as it is.
func (h *historyFile) load(limit int) ([]string, error) {
	data, err := readHistory(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var (
		lines   []string
		skipped int
		first   string // why the first line skipped was
	)
	for n, l := 1, data; len(l) > 0; n++ {
		var line []byte
		line, l, _ = bytes.Cut(l, []byte("\n"))
		var why string
		switch {
		case !utf8.Valid(line):
			why = fmt.Sprintf("line %d is not UTF-8 text", n)
		case len(line) > maxHistoryLine:
			why = fmt.Sprintf("line %d is over %d bytes", n, maxHistoryLine)
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			lines = append(lines, string(line))
			continue
		}
		if skipped == 0 {
			first = why
		}
		skipped++
	}
	if len(lines) > limit {
		lines = lines[len(lines)-limit:]
	}
	if skipped > 0 {
		return lines, fmt.Errorf("%d %s cannot be recalled (%s); the file keeps %s, and lines typed now are added after",
			skipped, plural(skipped, "line", "lines"), first, plural(skipped, "it", "them"))
	}
	return lines, nil
}

// add notes a line typed, to add to the file on exit.
func (h *historyFile) add(line string) {
	if len(h.added) == maxAdded {
		h.added = h.added[1:]
	}
	h.added = append(h.added, line)
}

// save adds the lines typed to the file as it is now, replacing it
// atomically (a temporary file renamed into place, so that a failed write
// keeps it whole). A symbolic link is written through: its target is
// replaced, keeping its mode, and the link stays. A new file is made
// with mode 0600.
func (h *historyFile) save() error {
	if len(h.added) == 0 {
		return nil
	}
	target, err := filepath.EvalSymlinks(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(h.path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("save history to %s: it is a symbolic link to a file that does not exist; create the file or give another --history", h.path)
		}
		target, err = h.path, nil
	}
	if err != nil {
		return fmt.Errorf("save history to %s: %w", h.path, err)
	}
	data, err := readHistory(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("save history to %s: %w; the lines typed are not saved", h.path, err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, strings.Join(h.added, "\n")+"\n"...)
	// WriteFile keeps an existing file's mode.
	if err := renameio.WriteFile(target, data, 0o600); err != nil {
		return fmt.Errorf("save history to %s: %w", h.path, err)
	}
	h.added = nil
	return nil
}

// readHistory reads the history file at name whole, refusing one over
// maxHistoryFile bytes or that is not a regular file.
func readHistory(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHistoryFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxHistoryFile {
		return nil, fmt.Errorf("%s is over %d MiB: trim it or give another --history", name, maxHistoryFile>>20)
	}
	return data, nil
}

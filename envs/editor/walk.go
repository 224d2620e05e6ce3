package editor

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sort"

	"github.com/spf13/afero"
)

// errNoFastWalk says the filesystem has no walk by directory handles, so
// the search walks through afero.
var errNoFastWalk = errors.New("no walk by directory handles")

// walkFs walks dir through the editor's afero filesystem and hands the
// searcher every file matching its glob, in path order: a directory's
// entries sorted as their full paths sort (a directory as its name and a
// slash). Directories the glob does not reach and ignored ones are left
// out; symbolic links to files inside the root are followed, links to
// directories are not.
func (e *Editor) walkFs(ctx context.Context, s *searcher, ig *ignorer, dir string, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := e.readDir(dir)
	if err != nil {
		if dir == "." {
			return err
		}
		s.unreadableDirs++
		return nil
	}
	if depth > 0 {
		for _, en := range entries {
			if en.Name() == ".gitignore" {
				defer ig.pop(ig.pushFrom(e.fs, dir))
				break
			}
		}
	}
	sortEntries(entries, func(fi fs.FileInfo) (string, bool) { return fi.Name(), fi.IsDir() })
	for _, en := range entries {
		p := path.Join(dir, en.Name())
		mode := en.Mode()
		switch {
		case mode.IsDir():
			enter, named := s.glob.enter(p)
			if !enter {
				continue
			}
			if !named && ig.ignored(p, true) {
				s.leftOut(p)
				continue
			}
			if depth+1 >= maxSearchDepth {
				s.tooDeep++
				continue
			}
			if err := e.walkFs(ctx, s, ig, p, depth+1); err != nil {
				return err
			}
		default:
			if !s.glob.match(p) {
				continue
			}
			if ig.ignored(p, false) {
				s.leftOut(p)
				continue
			}
			if mode&fs.ModeSymlink != 0 {
				// A link counts when it leads to a regular file inside the root.
				if fi, err := e.fs.Stat(p); err != nil || !fi.Mode().IsRegular() {
					continue
				}
			}
			if !s.take() {
				return errStopWalk
			}
			raw, err := readRaw(e.fs, p, s.limit)
			if err != nil {
				s.failed(err)
				continue
			}
			s.scan(p, raw)
		}
	}
	return nil
}

// readRaw reads the regular file name whole, refusing files over limit.
func readRaw(fsys afero.Fs, name string, limit int64) ([]byte, error) {
	f, fi, err := openRegular(fsys, name, false, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, fi.Size(), name, limit)
}

// sortEntries sorts directory entries as their full paths sort: a
// directory's key is its name and a slash, so "a-b", "a.go" and "a/x" come
// in that order.
func sortEntries[T any](entries []T, key func(T) (name string, dir bool)) {
	k := func(en T) string {
		name, dir := key(en)
		if dir {
			return name + "/"
		}
		return name
	}
	sort.Slice(entries, func(i, j int) bool { return k(entries[i]) < k(entries[j]) })
}

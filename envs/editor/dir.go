package editor

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

const (
	// maxListed is how many entries a directory listing shows.
	maxListed = 500
	// maxDirEntries is how many entries of one directory a listing reads
	// (options.dirEntries); past them it says the directory has more.
	maxDirEntries = 100_000
	// dirBatch is how many entries a listing reads at a time.
	dirBatch = 1024
)

// listDir answers view <dir>: the directory's files and directories two
// levels deep, sorted, directories marked with a slash, hidden entries and
// ignored folders left out. It keeps only the entries it shows, reads at
// most maxDirEntries of each directory, and stops when ctx is done.
func (e *Editor) listDir(ctx context.Context, dir string) (string, error) {
	var ig ignorer
	ig.pushAncestors(e.fs, dir)
	var (
		listed  []string
		more    int
		left    int
		cut     []string // directories with more than maxDirEntries entries
		readErr error
	)
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		if ctx.Err() != nil {
			return
		}
		mark := -1
		if depth > 1 {
			mark = ig.pushFrom(e.fs, d)
		}
		part, err := e.readListed(ctx, d, maxListed-len(listed), &ig)
		if err != nil {
			if readErr == nil {
				readErr = fmt.Errorf("cannot list %s: %w", showPath(d), classify(d, err))
			}
		} else {
			left += part.left
			more += part.over
			if part.cut {
				cut = append(cut, d)
			}
		}
		for _, en := range part.kept {
			p := path.Join(d, en.name)
			if len(listed) >= maxListed {
				more++
				continue
			}
			if en.isDir {
				listed = append(listed, p+"/")
				if depth < 2 {
					walk(p, depth+1)
				}
				continue
			}
			listed = append(listed, p)
		}
		if mark >= 0 {
			ig.pop(mark)
		}
	}
	walk(dir, 1)
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("interrupted while listing %s: %v", showPath(dir), context.Cause(ctx))
	}
	if readErr != nil && len(listed) == 0 {
		return "", readErr
	}
	var b strings.Builder
	shown := showPath(dir)
	if dir == "." {
		shown = "the project root"
	}
	fmt.Fprintf(&b, "Files in %s, two levels deep (hidden files and ignored folders left out):", shown)
	if len(listed) == 0 {
		b.WriteString("\n  (nothing)")
	}
	for _, p := range listed {
		b.WriteString("\n  ")
		b.WriteString(showPath(p))
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more (list a subdirectory to see them)", more)
	}
	switch {
	case left == 1:
		b.WriteString("\n1 hidden or ignored entry left out")
	case left > 1:
		fmt.Fprintf(&b, "\n%d hidden or ignored entries left out", left)
	}
	for _, d := range cut {
		fmt.Fprintf(&b, "\n%s has more than %d entries: the listing read %d of them, in the order the system gave them, and left the others out (ls or find in bash lists them all)",
			showPath(d+"/"), e.opt.dirEntries, e.opt.dirEntries)
	}
	return b.String(), nil
}

// entry is a directory entry a listing keeps.
type entry struct {
	name  string
	isDir bool
}

// dirPart is what a listing keeps of one directory.
type dirPart struct {
	kept []entry // the first entries by name that are not hidden or ignored, sorted
	over int     // entries not hidden or ignored past kept
	left int     // hidden or ignored entries
	cut  bool    // the directory has more entries than a listing reads
}

// byNameDesc is a heap of entries whose top is the last by name.
type byNameDesc []entry

func (h byNameDesc) Len() int           { return len(h) }
func (h byNameDesc) Less(i, j int) bool { return h[i].name > h[j].name }
func (h byNameDesc) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byNameDesc) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *byNameDesc) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// dirEntryReader is the batch read of os.File, which gives each entry's
// type without a stat.
type dirEntryReader interface {
	ReadDir(n int) ([]fs.DirEntry, error)
}

// readListed reads the directory d in batches of dirBatch, at most
// e.opt.dirEntries entries, and keeps the first keep by name of those
// neither hidden nor ignored by ig; it stops when ctx is done.
func (e *Editor) readListed(ctx context.Context, d string, keep int, ig *ignorer) (dirPart, error) {
	var part dirPart
	f, err := e.fs.Open(d)
	if err != nil {
		return part, err
	}
	defer f.Close()
	h := make(byNameDesc, 0, min(keep, dirBatch))
	add := func(name string, isDir bool) {
		if strings.HasPrefix(name, ".") || ig.ignored(path.Join(d, name), isDir) {
			part.left++
			return
		}
		switch {
		case len(h) < keep:
			heap.Push(&h, entry{name, isDir})
		case keep > 0 && name < h[0].name:
			h[0] = entry{name, isDir}
			heap.Fix(&h, 0)
			part.over++
		default:
			part.over++
		}
	}
	dr, fast := f.(dirEntryReader)
	for read := 0; ; {
		if err := ctx.Err(); err != nil {
			return part, err
		}
		if read >= e.opt.dirEntries {
			part.cut = true
			break
		}
		n := min(dirBatch, e.opt.dirEntries-read)
		var got int
		if fast {
			var es []fs.DirEntry
			es, err = dr.ReadDir(n)
			for _, en := range es {
				add(en.Name(), en.IsDir())
			}
			got = len(es)
		} else {
			var fis []fs.FileInfo
			fis, err = f.Readdir(n)
			for _, fi := range fis {
				add(fi.Name(), fi.IsDir())
			}
			got = len(fis)
		}
		read += got
		if errors.Is(err, io.EOF) || (err == nil && got == 0) {
			break
		}
		if err != nil {
			return part, err
		}
	}
	if part.cut {
		// Is there one more?
		if fast {
			es, _ := dr.ReadDir(1)
			part.cut = len(es) > 0
		} else {
			fis, _ := f.Readdir(1)
			part.cut = len(fis) > 0
		}
	}
	part.kept = slices.SortedFunc(slices.Values(h), func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return part, nil
}

// readDir lists the directory d sorted by name.
func (e *Editor) readDir(d string) ([]fs.FileInfo, error) {
	f, err := e.fs.Open(d)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.Readdir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

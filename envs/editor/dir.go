package editor

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// maxListed is how many entries a directory listing shows.
const maxListed = 500

// listDir answers view <dir>: the directory's files and directories two
// levels deep, sorted, directories marked with a slash, hidden entries and
// ignored folders left out.
func (e *Editor) listDir(dir string) (string, error) {
	var ig ignorer
	ig.pushAncestors(e.fs, dir)
	var (
		listed  []string
		more    int
		left    int
		readErr error
	)
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		entries, err := e.readDir(d)
		if err != nil {
			if readErr == nil {
				readErr = fmt.Errorf("cannot list %s: %w", d, classify(d, err))
			}
			return
		}
		mark := -1
		if depth > 1 {
			mark = ig.pushFrom(e.fs, d)
		}
		for _, en := range entries {
			name := en.Name()
			p := path.Join(d, name)
			isDir := en.IsDir()
			if strings.HasPrefix(name, ".") || ig.ignored(p, isDir) {
				left++
				continue
			}
			if len(listed) >= maxListed {
				more++
				continue
			}
			if isDir {
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
	if readErr != nil && len(listed) == 0 {
		return "", readErr
	}
	var b strings.Builder
	shown := dir
	if dir == "." {
		shown = "the project root"
	}
	fmt.Fprintf(&b, "Files in %s, two levels deep (hidden files and ignored folders left out):", shown)
	if len(listed) == 0 {
		b.WriteString("\n  (nothing)")
	}
	for _, p := range listed {
		b.WriteString("\n  ")
		b.WriteString(strings.ToValidUTF8(p, "\uFFFD"))
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
	return b.String(), nil
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
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

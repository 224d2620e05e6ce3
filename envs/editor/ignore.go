package editor

import (
	"bufio"
	"bytes"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/spf13/afero"
)

// maxIgnoreFile is the largest .gitignore file read; a larger one is not
// used.
const maxIgnoreFile = 1 << 20

// alwaysIgnored are directories search and directory listings leave out
// wherever they are: version control data and installed dependencies.
var alwaysIgnored = map[string]bool{".git": true, "node_modules": true}

// ignorer holds the patterns of the .gitignore files of the directories
// a walk is in, outermost first, and tells which paths they leave out.
type ignorer struct {
	patterns []gitignore.Pattern
	off      bool // leave nothing out
}

// push adds the patterns of the .gitignore file content found in dir, a
// slash path relative to the root ("." for the root), and returns the mark
// pop takes to remove them.
func (ig *ignorer) push(dir string, content []byte) int {
	mark := len(ig.patterns)
	var domain []string
	if dir != "." && dir != "" {
		domain = strings.Split(dir, "/")
	}
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ig.patterns = append(ig.patterns, gitignore.ParsePattern(line, domain))
	}
	return mark
}

// pop removes the patterns pushed since mark.
func (ig *ignorer) pop(mark int) { ig.patterns = ig.patterns[:mark] }

// ignored reports whether the path p (slash, relative to the root) is left
// out: a directory in alwaysIgnored, or a path the .gitignore patterns
// exclude (the last pattern that matches decides, as in git).
func (ig *ignorer) ignored(p string, isDir bool) bool {
	if ig.off {
		return false
	}
	if isDir && alwaysIgnored[path.Base(p)] {
		return true
	}
	if len(ig.patterns) == 0 {
		return false
	}
	segs := strings.Split(p, "/")
	for i := len(ig.patterns) - 1; i >= 0; i-- {
		if r := ig.patterns[i].Match(segs, isDir); r != gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

// ignoresAny reports whether dir or a directory above it is left out.
func (ig *ignorer) ignoresAny(dir string) bool {
	if dir == "." || dir == "" {
		return false
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		if ig.ignored(strings.Join(parts[:i+1], "/"), true) {
			return true
		}
	}
	return false
}

// pushFrom reads the .gitignore file of dir from fsys, if it has one, and
// pushes its patterns.
func (ig *ignorer) pushFrom(fsys afero.Fs, dir string) int {
	name := path.Join(dir, ".gitignore")
	f, fi, err := openRegular(fsys, name, false, maxIgnoreFile)
	if err != nil {
		return len(ig.patterns)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil || fi.Size() > maxIgnoreFile {
		return len(ig.patterns)
	}
	return ig.push(dir, buf.Bytes())
}

// pushAncestors pushes the .gitignore patterns of the root and of every
// directory down to dir, dir included.
func (ig *ignorer) pushAncestors(fsys afero.Fs, dir string) {
	ig.pushFrom(fsys, ".")
	if dir == "." {
		return
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		ig.pushFrom(fsys, strings.Join(parts[:i+1], "/"))
	}
}

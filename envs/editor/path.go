package editor

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// resolvePath turns a file name the agent wrote into a clean slash path
// relative to the project root. It refuses names that lead outside the
// root: "..", and absolute paths not inside the root directory. Symbolic
// links are checked by the filesystem when the file is opened.
func (e *Editor) resolvePath(name string) (string, error) {
	p, err := e.cleanPath(name)
	if err == nil && p == "." {
		return "", fmt.Errorf("path %s is the project root itself; name a file inside it", showPath(clip(name, 200)))
	}
	return p, err
}

// cleanPath is resolvePath that lets name be the root itself, ".".
func (e *Editor) cleanPath(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("empty file name; write a path relative to the project root")
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("file name %q has a NUL byte", clip(name, 60))
	}
	p := filepath.ToSlash(name)
	if path.IsAbs(p) || filepath.IsAbs(name) {
		rel, ok := e.insideRoot(name)
		if !ok {
			return "", fmt.Errorf("path %s is outside the project root; use a path relative to the root", showPath(clip(name, 200)))
		}
		p = rel
	}
	p = path.Clean(p)
	switch {
	case p == ".." || strings.HasPrefix(p, "../"):
		return "", fmt.Errorf("path %s leads outside the project root; use a path inside it, relative to the root", showPath(clip(name, 200)))
	}
	return p, nil
}

// insideRoot returns the slash path of the absolute name relative to the
// root directory, if it lies inside it.
func (e *Editor) insideRoot(name string) (string, bool) {
	clean := filepath.Clean(name)
	for _, dir := range e.rootDirs {
		rel, err := filepath.Rel(dir, clean)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
			return rel, true
		}
	}
	return "", false
}

// showPath returns p as a response or the screen shows it: as it is, or,
// when it has a control character, a character that does not print,
// bytes that are not UTF-8, a backslash or a double quote, quoted and
// escaped as Go writes strings, so that a name cannot make a line of its
// own; the commands read the quoted form back to the same name (see
// cutPath). A name with a part that begins or ends with white space is
// quoted too, so that "d/a.txt " is not read as d/a.txt; a space inside
// a part is left as it is.
func showPath(p string) string {
	if !utf8.ValidString(p) || strings.ContainsAny(p, `\"`) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if !unicode.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	for part := range strings.SplitSeq(p, "/") {
		if part != strings.TrimFunc(part, unicode.IsSpace) {
			return strconv.Quote(p)
		}
	}
	return p
}

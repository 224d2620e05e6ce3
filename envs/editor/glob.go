package editor

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// glob matches slash paths relative to the project root with
// github.com/bmatcuk/doublestar/v4: * matches any run of characters but
// /, ? one character, [...] a class, a ** segment any number of
// directories (none included), {a,b} either alternative. It adds what
// search needs beyond that: a pattern without a / matches file names at
// any depth (*.go is every Go file), and patterns that lead outside the
// root are refused.
type glob struct {
	pattern string // as doublestar takes it
	// base is the directory every match is under ("." for any): the
	// pattern's leading segments without wildcards. A walk need not enter
	// directories off the way to it.
	base string
}

// compileGlob checks and compiles a search glob.
func compileGlob(s string) (*glob, error) {
	p := strings.TrimPrefix(s, "./")
	if p == "" {
		p = "**"
	}
	if strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("glob %s is absolute; write it relative to the project root, like src/**/*.go", showPath(s))
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return nil, fmt.Errorf("glob %s leads outside the project root; search inside it", showPath(s))
		}
	}
	if !strings.Contains(p, "/") && p != "**" {
		p = "**/" + p
	}
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("bad glob %s: a [ or { has no closing ] or }; use *, ?, [abc], ** and {a,b}", showPath(s))
	}
	base, _ := doublestar.SplitPattern(p)
	if strings.Contains(base, `\`) {
		base = "." // an escaped character: walk everything, match exactly
	}
	return &glob{pattern: p, base: base}, nil
}

// match reports whether the slash path name matches.
func (g *glob) match(name string) bool {
	return doublestar.MatchUnvalidated(g.pattern, name)
}

// enter reports whether a walk should enter the directory dir, and
// whether dir is on the way to the glob's base (so ignore rules do not
// apply to it: the glob names it).
func (g *glob) enter(dir string) (enter, named bool) {
	switch {
	case g.base == "." || dir == ".":
		return true, dir == "."
	case dir == g.base || strings.HasPrefix(g.base, dir+"/"):
		return true, true
	case strings.HasPrefix(dir, g.base+"/"):
		return true, false
	}
	return false, false
}

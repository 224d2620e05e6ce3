package editor

import (
	"fmt"
	"path"
	"strings"
)

// maxGlobAlternatives bounds how many patterns brace expansion may produce.
const maxGlobAlternatives = 64

// glob matches slash paths relative to the project root. In a pattern, *
// matches any run of characters but /, ? one character, [...] a class
// (path.Match syntax); a ** segment matches any number of directories,
// none included; {a,b} matches either alternative. A pattern without a /
// matches file names at any depth: *.go is every Go file.
type glob struct {
	alts [][]string // segments of each alternative
	base []bool     // per alternative: match the file name only
}

// compileGlob checks and compiles a search glob.
func compileGlob(s string) (*glob, error) {
	s = strings.TrimPrefix(s, "./")
	if s == "" {
		s = "**"
	}
	if strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("glob %s is absolute; write it relative to the project root, like src/**/*.go", s)
	}
	alts, err := expandBraces(s)
	if err != nil {
		return nil, err
	}
	g := &glob{}
	for _, a := range alts {
		segs := strings.Split(a, "/")
		for _, seg := range segs {
			if seg == ".." {
				return nil, fmt.Errorf("glob %s leads outside the project root; search inside it", s)
			}
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("bad glob %s: %v; use *, ?, [abc], ** and {a,b}", s, err)
			}
		}
		g.alts = append(g.alts, segs)
		g.base = append(g.base, len(segs) == 1)
	}
	return g, nil
}

// match reports whether the slash path name matches.
func (g *glob) match(name string) bool {
	segs := strings.Split(name, "/")
	for i, a := range g.alts {
		if g.base[i] {
			if ok, _ := path.Match(a[0], segs[len(segs)-1]); ok || a[0] == "**" {
				return true
			}
			continue
		}
		if matchSegments(a, segs) {
			return true
		}
	}
	return false
}

// matchSegments matches path segments against pattern segments, where a
// "**" segment stands for zero or more segments.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// expandBraces expands {a,b} groups, nested ones included.
func expandBraces(s string) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var out []string
			for _, alt := range splitTop(s[open+1 : i]) {
				more, err := expandBraces(s[:open] + alt + s[i+1:])
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
				if len(out) > maxGlobAlternatives {
					return nil, fmt.Errorf("glob %s expands to more than %d patterns; simplify its braces", s, maxGlobAlternatives)
				}
			}
			return out, nil
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("bad glob %s: a { has no closing }", s)
	}
	return []string{s}, nil
}

// splitTop splits s at the commas outside nested braces.
func splitTop(s string) []string {
	var parts []string
	depth, startAt := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[startAt:i])
				startAt = i + 1
			}
		}
	}
	return append(parts, s[startAt:])
}

package section

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/visibility"
)

// ValidKey reports an error when key cannot be a section key: it must match
// ^[a-z0-9][a-z0-9_-]{0,63}$.
func ValidKey(key string) error {
	if validKey(key) {
		return nil
	}
	return fmt.Errorf("key %q must match ^[a-z0-9][a-z0-9_-]{0,63}$ (lower-case letters, digits, '-' and '_'; no dots, spaces or slashes; at most 64 characters)", key)
}

func validKey(key string) bool {
	if key == "" || len(key) > 64 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '-' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// Error is a problem with one section; Path is its dotted path.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("section %s: %v", e.Path, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// ErrNoSummary is returned, wrapped, when a section renders as SUMMARY but
// has no summary.
var ErrNoSummary = errors.New("no summary")

// NoSummaryError is the error for a section that must render as SUMMARY but
// has no summary; it matches [ErrNoSummary]. Its message is the one docs/design.md fixes.
type NoSummaryError struct{ Path string }

func (e *NoSummaryError) Error() string {
	return fmt.Sprintf("SUMMARY visibility requested for section '%s' but no summary template is defined.", e.Path)
}

// Is makes errors.Is(err, ErrNoSummary) true.
func (e *NoSummaryError) Is(target error) bool { return target == ErrNoSummary }

// Validate checks a tree of sections as a prompt is built, returning every
// problem found, joined, each an *Error naming the section's path: keys that
// do not match the key pattern, duplicate keys among siblings, empty titles
// and titles with a line break or another control character,
// bodies that do not parse or name fields their params type lacks, code
// fences left open, a constant SUMMARY, a brief or a separate section
// without a summary, nil children or tools, zero tools (not made by
// tools.New or tools.NewRaw), and tool names used twice
// anywhere in the tree or listed in reserved.
func Validate(roots []*Section, reserved ...string) error {
	v := validator{reserved: reserved}
	v.siblings(roots)
	return errors.Join(v.errs...)
}

type validator struct {
	reserved []string
	stack    []string          // keys from the root to the section being checked
	toolAt   map[string]string // tool name -> path of the section declaring it
	errs     []error
}

// path returns the dotted path of the section being checked. It is built
// only when needed, so a valid tree costs no path strings.
func (v *validator) path() string { return strings.Join(v.stack, ".") }

func (v *validator) fail(format string, args ...any) {
	v.errs = append(v.errs, &Error{Path: v.path(), Err: fmt.Errorf(format, args...)})
}

func (v *validator) siblings(list []*Section) {
	var seen map[string]bool // for long lists; short ones are scanned
	if len(list) > 64 {
		seen = make(map[string]bool, len(list))
	}
	dup := func(i int, key string) bool {
		if seen != nil {
			d := seen[key]
			seen[key] = true
			return d
		}
		return slices.ContainsFunc(list[:i], func(o *Section) bool { return o != nil && o.key == key })
	}
	for i, s := range list {
		if s == nil {
			if len(v.stack) == 0 {
				v.stack = append(v.stack, "(root)")
				v.fail("child %d is nil", i+1)
				v.stack = v.stack[:0]
			} else {
				v.fail("child %d is nil", i+1)
			}
			continue
		}
		v.stack = append(v.stack, s.key)
		if err := ValidKey(s.key); err != nil {
			v.errs = append(v.errs, &Error{Path: v.path(), Err: err})
		} else if dup(i, s.key) {
			v.fail("duplicate key %q among siblings", s.key)
		}
		v.section(s)
		v.siblings(s.kids())
		v.stack = v.stack[:len(v.stack)-1]
	}
}

// controlName names the control character s starts with.
func controlName(s string) string {
	switch r, _ := utf8.DecodeRuneInString(s); r {
	case '\n', '\r', 0x85:
		return fmt.Sprintf("a line break (%q)", r)
	default:
		return fmt.Sprintf("the control character %q", r)
	}
}

// openFenceIn is OpenFence of the dedented body, without dedenting bodies
// that have no fence at all.
func openFenceIn(body string) int {
	if !strings.Contains(body, "```") && !strings.Contains(body, "~~~") {
		return 0
	}
	return markdown.OpenFence(markdown.Dedent(body))
}

// notInTitle reports whether r may not be in a title: a control character
// other than a tab, which ends no line.
func notInTitle(r rune) bool { return r != '\t' && unicode.IsControl(r) }

func (v *validator) section(s *Section) {
	if s.err != nil {
		v.errs = append(v.errs, &Error{Path: v.path(), Err: s.err})
	}
	if s.title == "" {
		v.fail("title is empty")
	} else if i := strings.IndexFunc(s.title, notInTitle); i >= 0 {
		v.fail("title %q holds %s; a title is one line of text: write it without line breaks or control characters", s.title, controlName(s.title[i:]))
	} else if i := strings.IndexAny(s.title, "\u2028\u2029"); i >= 0 {
		v.fail("title %q holds a line separator (U+%04X); a title is one line of text: write it without line breaks", s.title, []rune(s.title[i:])[0])
	}
	if line := openFenceIn(s.bodySrc); line > 0 {
		v.fail("body opens a code fence on line %d and never closes it; close it, or it swallows the rest of the prompt", line)
	}
	if c, ok := s.vis.(visibility.Constant); ok && visibility.Mode(c) == visibility.Summary && !s.HasSummary() {
		v.errs = append(v.errs, &Error{Path: v.path(), Err: &NoSummaryError{Path: v.path()}})
	}
	if !s.HasSummary() && s.brief != "" {
		v.fail("a brief needs a summary: set Summary, which the brief shortens")
	}
	if !s.HasSummary() && s.separate {
		v.fail("a separate section needs a summary, shown in its place where an ancestor is shown in full")
	}
	for i, t := range s.tools {
		if t == nil {
			v.fail("tool %d is nil", i+1)
			continue
		}
		name := t.Name()
		if name == "" {
			// Only a zero tools.Tool has no name; it has no handler either.
			v.fail("tool %d has no name or handler: make tools with tools.New or tools.NewRaw", i+1)
			continue
		}
		if slices.Contains(v.reserved, name) {
			v.fail("tool name %q is reserved; rename the tool", name)
			continue
		}
		if prev, ok := v.toolAt[name]; ok {
			v.fail("duplicate tool name %q (also declared by section %s)", name, prev)
			continue
		}
		if v.toolAt == nil {
			v.toolAt = map[string]string{}
		}
		v.toolAt[name] = v.path()
	}
}

package prompt

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/unfold-dev/unfold/section"
)

// OpenSectionsName is the name of the tool that opens summarized sections.
// It is reserved: a section may not declare a tool of that name.
const OpenSectionsName = "open_sections"

// Template is a validated tree of sections under a namespace and key. It is
// immutable and safe for concurrent use; bind params to it with
// [Template.Bind] to get a [Prompt] that renders.
type Template struct {
	ns, key  string
	nodes    []node                    // depth-first, in declaration order
	byPath   map[string]int            // dotted path -> index in nodes
	needs    map[reflect.Type][]string // params type -> paths of the sections that take it
	sizeHint int                       // bytes of fixed text, to size the output buffer
}

// node is one section placed in the tree.
type node struct {
	sec      *section.Section
	path     string
	number   string // "2.1."
	heading  string // "## 2.1. Title (path)"
	depth    int
	parent   int    // index of the parent, -1 at the top
	children []int  // indices of the direct children
	end      int    // index after the last descendant: the subtree is [i, end)
	dedented string // the fixed body, dedented and trimmed
	static   string // dedented with headings shifted for depth
}

// New builds a template from top-level sections and validates the whole tree
// (see [section.Validate]). ns names the template's family, such as
// "agents/assistant"; key names the template in it.
func New(ns, key string, sections ...*section.Section) (*Template, error) {
	var errs []error
	if strings.TrimSpace(ns) == "" || strings.ContainsAny(ns, " \t\r\n") {
		errs = append(errs, fmt.Errorf("namespace %q must be non-empty and contain no spaces", ns))
	}
	if err := section.ValidKey(key); err != nil {
		errs = append(errs, fmt.Errorf("template %w", err))
	}
	if len(sections) == 0 {
		errs = append(errs, errors.New("no sections"))
	}
	if err := section.Validate(sections, OpenSectionsName); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("prompt: new %s/%s: %w", ns, key, err)
	}
	count := countSections(sections)
	t := &Template{ns: ns, key: key, nodes: make([]node, 0, count), byPath: make(map[string]int, count), needs: map[reflect.Type][]string{}}
	t.add(sections, -1, "", "", 0)
	return t, nil
}

// MustNew is like [New] but panics on error. Use it for templates declared
// at package level.
func MustNew(ns, key string, sections ...*section.Section) *Template {
	t, err := New(ns, key, sections...)
	if err != nil {
		panic(err)
	}
	return t
}

func (t *Template) add(list []*section.Section, parent int, prefix, number string, depth int) []int {
	idx := make([]int, 0, len(list))
	hashes := "######"[:min(depth+2, 6)]
	for i, s := range list {
		// One string holds the heading; the number and the path are slices of it.
		var b strings.Builder
		b.Grow(len(hashes) + len(number) + 4 + len(s.Title()) + len(prefix) + len(s.Key()) + 4)
		b.WriteString(hashes)
		b.WriteByte(' ')
		numStart := b.Len()
		b.WriteString(number)
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte('.')
		numEnd := b.Len()
		b.WriteByte(' ')
		b.WriteString(s.Title())
		b.WriteString(" (")
		pathStart := b.Len()
		if prefix != "" {
			b.WriteString(prefix)
			b.WriteByte('.')
		}
		b.WriteString(s.Key())
		pathEnd := b.Len()
		b.WriteByte(')')
		heading := b.String()
		n := node{
			sec:     s,
			path:    heading[pathStart:pathEnd],
			number:  heading[numStart:numEnd],
			heading: heading,
			depth:   depth,
			parent:  parent,
		}
		if !s.Dynamic() {
			n.dedented = section.Dedent(mustBody(s))
			n.static = shiftHeadings(n.dedented, depth+2)
		}
		t.sizeHint += len(n.heading) + max(len(n.static), len(s.Source())) + 4
		at := len(t.nodes)
		t.nodes = append(t.nodes, n)
		t.byPath[n.path] = at
		if pt := s.ParamsType(); pt != nil {
			t.needs[pt] = append(t.needs[pt], n.path)
		}
		idx = append(idx, at)
		kids := t.add(s.Children(), at, n.path, n.number, depth+1)
		t.nodes[at].children = kids
		t.nodes[at].end = len(t.nodes)
	}
	return idx
}

func countSections(list []*section.Section) int {
	n := len(list)
	for _, s := range list {
		n += countSections(s.Children())
	}
	return n
}

// Namespace returns the template's namespace.
func (t *Template) Namespace() string { return t.ns }

// Key returns the template's key.
func (t *Template) Key() string { return t.key }

// Section returns the section at the dotted path.
func (t *Template) Section(path string) (*section.Section, bool) {
	i, ok := t.byPath[path]
	if !ok {
		return nil, false
	}
	return t.nodes[i].sec, true
}

// Paths returns the dotted path of every section, depth first.
func (t *Template) Paths() []string {
	ps := make([]string, len(t.nodes))
	for i, n := range t.nodes {
		ps[i] = n.path
	}
	return ps
}

// mustBody returns a fixed body; fixed bodies cannot fail.
func mustBody(s *section.Section) string {
	b, _ := s.Body(nil)
	return b
}

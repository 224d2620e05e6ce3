package prompt

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

// OpenSectionsName is the name of the tool that opens summarized sections.
// It is reserved: a section may not declare a tool of that name.
const OpenSectionsName = "open_sections"

// Template is a validated tree of sections under a namespace and key. It is
// immutable and safe for concurrent use; bind params to it with
// [Template.Bind] to get a [Prompt] that renders.
type Template struct {
	ns, key string
	roots   []*section.Section // as given to New, to build it again unfolded
	folded  bool               // some section is folded (see Prompt.Unfold)
	nodes   []node             // depth-first, in declaration order
	hot     []nodeHot          // per node
	needs   []reflect.Type     // the params types sections take, in first-use order
	briefs  bool               // some section has a brief
	session bool               // some section's enabled predicate reads the session

	pathsOnce sync.Once
	byPath    map[string]int // dotted path -> index in nodes, built on first lookup

	orderOnce sync.Once
	order     []int32 // node indices in budget order; see budgetOrder
}

// node is one section placed in the tree.
type node struct {
	sec      *section.Section
	path     string
	number   string // "2.1."
	heading  string // "## 2.1. Title (path)"
	depth    int
	parent   int                 // index of the parent, -1 at the top
	children []int               // indices of the direct children
	end      int                 // index after the last descendant: the subtree is [i, end)
	dedented string              // the fixed body, dedented and trimmed
	static   string              // dedented with headings shifted for depth
	sel      visibility.Selector // sec.Selector()
	folded   bool                // sec was folded when the template was built
}

// nodeHot is what every render reads of every node, kept apart from node
// and packed, so that rendering a large tree reads little memory.
type nodeHot struct {
	parent int32 // -1 at the top
	// mode is the constant mode the section's selector gives (FULL when
	// it has none), or -1 when it has another selector.
	mode  int8
	flags nodeFlags
}

// nodeFlags copy what a render asks of a node's section.
type nodeFlags uint8

const (
	live       nodeFlags = 1 << iota // sec.Live()
	dynamic                          // sec.Dynamic()
	summarized                       // sec has a summary (maybe lazy)
	briefed                          // sec has a brief
	liveBelow                        // sec or a descendant is live
	// sessionBelow: a descendant's enabled predicate reads the session,
	// so which children the section's suffix lists, and whether opening
	// it offers tools, may change from one render to the next: its
	// SUMMARY blocks are not kept.
	sessionBelow
	tooled // sec declares tools of its own, or opens in place as if it did
)

func (h nodeHot) is(f nodeFlags) bool { return h.flags&f != 0 }

// hotOf packs what a render reads of a section placed under parent.
func hotOf(s *section.Section, parent int) nodeHot {
	h := nodeHot{parent: int32(parent), mode: -1}
	switch sel := s.Selector().(type) {
	case nil:
		h.mode = int8(visibility.Full)
	case visibility.Constant:
		if m := visibility.Mode(sel); m == visibility.Full || m == visibility.Summary {
			h.mode = int8(m)
		}
	}
	if s.Live() {
		h.flags |= live
	}
	if s.Dynamic() {
		h.flags |= dynamic
	}
	if s.HasSummary() {
		h.flags |= summarized
	}
	if s.Brief() != "" {
		h.flags |= briefed
	}
	if len(s.Tools()) > 0 || s.OpensInPlace() {
		h.flags |= tooled
	}
	return h
}

// New builds a template from top-level sections and validates the whole tree
// (see [section.Validate]). ns names the template's family, such as
// "agents/assistant"; key names the template in it.
func New(ns, key string, sections ...*section.Section) (t *Template, err error) {
	// The tree is walked several times: no section may unfold between
	// them (section.Stable).
	section.Stable(func() { t, err = build(ns, key, sections) })
	return t, err
}

// build is New, while no section unfolds.
func build(ns, key string, sections []*section.Section) (*Template, error) {
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
	t := &Template{ns: ns, key: key, roots: slices.Clone(sections), nodes: make([]node, 0, count), hot: make([]nodeHot, 0, count)}
	size := headingsSize(sections, 2, 0, 0)
	if size > math.MaxInt32 {
		return nil, fmt.Errorf("prompt: new %s/%s: the section headings take %d bytes, more than the 2 GiB a template holds", ns, key, size)
	}
	b := &headings{at: make([]headingAt, 0, count), kids: make([]int, 0, count)}
	b.buf.Grow(size)
	t.add(b, sections, -1, 0)
	// Every heading, number and path is a slice of one string.
	all := b.buf.String()
	for i := range t.nodes {
		n, o := &t.nodes[i], b.at[i]
		n.heading, n.number, n.path = all[o.start:o.end], all[o.numStart:o.numEnd], all[o.pathStart:o.pathEnd]
	}
	return t, nil
}

// headings collects the text of every node's heading in one buffer while
// the tree is walked, and the lists of children in one array, so that a
// node's children sit together with its siblings'.
type headings struct {
	buf  strings.Builder
	at   []headingAt // per node
	kids []int       // the lists of children, one after the other
}

// headingAt locates a node's heading, number and path in headings.buf.
type headingAt struct{ start, numStart, numEnd, pathStart, pathEnd, end int32 }

// written returns the text between two offsets of the buffer.
func (h *headings) written(from, to int32) string { return h.buf.String()[from:to] }

func (h *headings) offset() int32 { return int32(h.buf.Len()) }

// MustNew is like [New] but panics on error. Use it for templates declared
// at package level.
func MustNew(ns, key string, sections ...*section.Section) *Template {
	t, err := New(ns, key, sections...)
	if err != nil {
		panic(err)
	}
	return t
}

// add appends the nodes of list, children of node parent (-1 at the top),
// and returns their indices. Headings go to b: "## 2.1. Title (path)".
func (t *Template) add(b *headings, list []*section.Section, parent int, depth int) []int {
	start := len(b.kids)
	b.kids = b.kids[:start+len(list)]
	idx := b.kids[start:start:len(b.kids)]
	hashes := "######"[:min(depth+2, 6)]
	for i, s := range list {
		var o headingAt
		o.start = b.offset()
		b.buf.WriteString(hashes)
		b.buf.WriteByte(' ')
		o.numStart = b.offset()
		if parent >= 0 {
			b.buf.WriteString(b.written(b.at[parent].numStart, b.at[parent].numEnd))
		}
		var digits [20]byte
		b.buf.Write(strconv.AppendInt(digits[:0], int64(i+1), 10))
		b.buf.WriteByte('.')
		o.numEnd = b.offset()
		b.buf.WriteByte(' ')
		b.buf.WriteString(s.Title())
		b.buf.WriteString(" (")
		o.pathStart = b.offset()
		if parent >= 0 {
			b.buf.WriteString(b.written(b.at[parent].pathStart, b.at[parent].pathEnd))
			b.buf.WriteByte('.')
		}
		b.buf.WriteString(s.Key())
		o.pathEnd = b.offset()
		b.buf.WriteByte(')')
		o.end = b.offset()
		b.at = append(b.at, o)

		n := node{sec: s, depth: depth, parent: parent, sel: s.Selector(), folded: s.Folded()}
		t.folded = t.folded || n.folded
		if !s.Dynamic() {
			n.dedented = markdown.Dedent(mustBody(s))
			n.static = shiftHeadings(n.dedented, depth+2)
		}
		at := len(t.nodes)
		t.nodes = append(t.nodes, n)
		t.hot = append(t.hot, hotOf(s, parent))
		t.briefs = t.briefs || s.Brief() != ""
		t.session = t.session || s.ReadsSession()
		if pt := s.ParamsType(); pt != nil && !slices.Contains(t.needs, pt) {
			t.needs = append(t.needs, pt)
		}
		idx = append(idx, at)
		kids := t.add(b, s.Children(), at, depth+1)
		t.nodes[at].children = kids
		t.nodes[at].end = len(t.nodes)
		if t.hot[at].is(live) || slices.ContainsFunc(kids, func(k int) bool { return t.hot[k].is(liveBelow) }) {
			t.hot[at].flags |= liveBelow
		}
		if slices.ContainsFunc(kids, func(k int) bool { return t.hot[k].is(sessionBelow) || t.nodes[k].sec.ReadsSession() }) {
			t.hot[at].flags |= sessionBelow
		}
	}
	return idx
}

// headingsSize is the length of the headings of list and its descendants
// at heading level hashes, under a number and a path of the given lengths.
func headingsSize(list []*section.Section, hashes, number, path int) int {
	size := 0
	for i, s := range list {
		num := number + len(strconv.Itoa(i+1)) + 1
		p := len(s.Key())
		if path > 0 {
			p += path + 1
		}
		size += min(hashes, 6) + 1 + num + 1 + len(s.Title()) + 2 + p + 1
		size += headingsSize(s.Children(), hashes+1, num, p)
	}
	return size
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
	i, ok := t.index(path)
	if !ok {
		return nil, false
	}
	return t.nodes[i].sec, true
}

// index returns the index of the node at the dotted path.
func (t *Template) index(path string) (int, bool) {
	t.pathsOnce.Do(func() {
		t.byPath = make(map[string]int, len(t.nodes))
		for i, n := range t.nodes {
			t.byPath[n.path] = i
		}
	})
	i, ok := t.byPath[path]
	return i, ok
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

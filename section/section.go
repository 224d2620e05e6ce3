package section

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// MaxBodyBytes bounds what a body template may write: a template that
// writes more (a range over a huge number, templates that call each other
// twice at every level) fails with [ErrBodyTooLarge] instead of filling
// memory.
const MaxBodyBytes = 16 << 20

// ErrBodyTooLarge is the error of a body template that wrote more than
// [MaxBodyBytes].
var ErrBodyTooLarge = fmt.Errorf("the body is larger than %d bytes; a template that repeats itself that much is a mistake", MaxBodyBytes)

// boundedBuilder is a strings.Builder that refuses to grow past max
// bytes, and charges what it is given to work.
type boundedBuilder struct {
	strings.Builder
	max  int
	work *Work
}

func (b *boundedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, ErrBodyTooLarge
	}
	if err := b.work.move(len(p)); err != nil {
		return 0, err
	}
	return b.Builder.Write(p)
}

func (b *boundedBuilder) WriteString(s string) (int, error) {
	if b.Len()+len(s) > b.max {
		return 0, ErrBodyTooLarge
	}
	if err := b.work.move(len(s)); err != nil {
		return 0, err
	}
	return b.Builder.WriteString(s)
}

// None is the params type of a section that takes no params.
type None = struct{}

// Spec declares a section whose body is rendered from params of type P
// (a struct type, a map with string keys such as params decoded from JSON,
// or [None]). Zero fields mean: no body, no summary, FULL,
// always enabled, no children, no tools, priority 0.
type Spec[P any] struct {
	// Key identifies the section among its siblings. It must match
	// ^[a-z0-9][a-z0-9_-]{0,63}$: no dots (the dot joins keys into paths) and
	// safe as a file name.
	Key string
	// Title is the heading text, one line. Space around it (a title
	// written on a line of its own, a trailing newline) is trimmed: the
	// heading ends at the title, and a title of only space is empty. A
	// line break or another control character inside it is refused when
	// the prompt is built, as it would end the heading early.
	Title string
	// Body is a text/template executed with the section's params
	// (missingkey=error), then dedented and trimmed. Headings in it are
	// shifted below the section's own heading.
	Body string
	// Content, when set, computes the body at render time instead of Body,
	// for live text such as an environment's screen. Its result is not a
	// template; it is dedented, trimmed and has its headings shifted like a
	// body. It must be safe to call from many goroutines.
	Content func(P) (string, error)
	// Funcs are extra template functions available to Body.
	Funcs template.FuncMap
	// Summary replaces the body, the children and the tools when the section
	// renders as SUMMARY. It is a text/template executed with the section's
	// params, as Body is (missingkey=error, Funcs); a summary without
	// actions ("{{") is shown as it is.
	Summary string
	// LazySummary, when set instead of Summary, computes the summary the
	// first time it is needed, and keeps it: for a summary that costs
	// something to compute (it reads a file) in a tree where most
	// summaries are never shown. It must return a non-empty text and be
	// safe to call from many goroutines. An empty text, or a panic, is
	// kept as an error that every render showing the summary fails with.
	LazySummary func() string
	// Brief, when set, is a shorter summary (a first sentence, a few
	// words) that a token budget may show in place of Summary, when it
	// costs fewer tokens, so that more sections fit with their summary in
	// full. A template like Summary; it needs a Summary.
	Brief string
	// Separate makes the section open only by its own key: where an
	// ancestor is shown in full as a document of its own (a context file
	// written by open_sections, the content of an opening), the section
	// shows its summary and how to open it instead of its content. It
	// needs a Summary.
	Separate bool
	// Visibility selects FULL or SUMMARY when the session has no override;
	// nil means FULL. See package visibility.
	Visibility visibility.Selector
	// Enabled reports whether the section (and its subtree) is rendered at
	// all; nil means always. A disabled section keeps its number. See
	// Defaults for a section Bind is given no params for.
	Enabled func(P) bool
	// EnabledIn is Enabled for a section that depends on the session as
	// well as its params: a step shown once an earlier one is done, a
	// section that appears after a command ran. sess is nil when the
	// prompt renders without a session. It is called at every render; set
	// Enabled or EnabledIn, not both.
	EnabledIn func(params P, sess *session.Session) bool
	// Defaults, when set, are the params the section renders with (and
	// its predicates read) when the prompt's Bind is given no value of
	// type P; a value given to Bind wins. Without defaults and without a
	// value, Bind accepts a section only when it is disabled whatever
	// the session: under a section Enabled disables, or disabled by its
	// own Enabled given the zero value of P (an unset switch, an empty
	// path). The value is copied when the section is created.
	Defaults *P
	// Children are the subsections, in order.
	Children []*Section
	// LazyChildren, when set instead of Children, finds the subsections
	// when the section is first opened, for children that cost something
	// to find (a skill's files, listed from disk) in a tree where most
	// sections are never opened. Until then the section is folded: it
	// has no children, and its summary names none. Opening it, or a path
	// below it, through a prompt's disclosure unfolds it ([Section.Unfold]):
	// the function is called once, and the section has its result as
	// children from then on, in every prompt built from it. A folded
	// section needs a summary and Visibility visibility.Const(
	// visibility.Summary): it shows in full only when it is opened. The
	// children found are checked before the section keeps them (see
	// [Section.Unfold]). The function runs while the disclosure that opens
	// the section holds its lock, so it must not call the disclosure; the
	// tools of the children are offered (and deferred) only once they are
	// found.
	LazyChildren func() []*Section
	// Tools are offered to the model while the section renders in full.
	Tools []*tools.Tool
	// OpensInPlace makes opening the section show it in full in the
	// prompt, as opening a section with tools does, even while it and its
	// subsections carry none, rather than write its content to a context
	// file: for a section whose tools join later (an MCP server still
	// starting), which a section built again with them then offers, the
	// session having it open.
	OpensInPlace bool
	// Priority orders sections for token budgets: a budget gives
	// sections back in full from a prompt where all are summarized,
	// higher priorities first, each one that fits in what is left. So of
	// two sections of the same size, the one of lower priority is
	// summarized first; but a larger section of higher priority that does
	// not fit stays summarized while a smaller one of lower priority that
	// fits is shown in full. See prompt.WithBudget.
	Priority int
}

// Section is one node of a prompt tree. Create it with [New]; its fields
// are fixed from then on, so one Section may appear in many prompts and be
// rendered from many goroutines. Its key passes [ValidKey]. What it was
// made with reads back through [Section.Key], [Section.Title],
// [Section.Source] (the body as declared), [Section.ParamsType],
// [Section.Selector], [Section.Separate] and the others;
// [Section.AppendBody] renders the body into a buffer.
type Section struct {
	key      string
	title    string
	bodySrc  string
	body     *guarded    // nil when the body is static, simple or absent
	simple   *simpleBody // the body, when it only references fields
	content  func(any) (string, error)
	summary  string
	summaryT compiled  // summary as a template, when it has actions
	lazy     *lazyText // computes summary once, when set
	brief    string
	briefT   compiled // brief as a template, when it has actions
	separate bool
	inPlace  bool
	vis      visibility.Selector
	enabled  func(params any, sess *session.Session) bool
	inSess   bool // enabled reads the session
	defaults any  // a copy of *Spec.Defaults; nil when unset
	zero     any  // the zero value of the params type, for enabled
	children []*Section
	// later finds the children of a folded section (Spec.LazyChildren);
	// unfolded holds them once found (none when they were refused).
	later    func() []*Section
	unfold   sync.Once
	unfolded atomic.Pointer[[]*Section]
	tools    []*tools.Tool
	priority int
	params   reflect.Type // nil for None
	err      error        // a construction error, reported when the prompt is built
}

var noneType = reflect.TypeFor[None]()

// New creates a section from spec. Mistakes in spec (a template that does
// not parse, a bad key) are reported when the prompt that contains the
// section is built, with the section's path.
func New[P any](spec Spec[P]) *Section {
	s := &Section{
		key:      spec.Key,
		title:    strings.TrimSpace(spec.Title),
		bodySrc:  spec.Body,
		summary:  spec.Summary,
		brief:    spec.Brief,
		separate: spec.Separate,
		inPlace:  spec.OpensInPlace,
		vis:      spec.Visibility,
		children: append([]*Section(nil), spec.Children...),
		later:    spec.LazyChildren,
		tools:    append([]*tools.Tool(nil), spec.Tools...),
		priority: spec.Priority,
	}
	if spec.LazySummary != nil {
		s.lazy = &lazyText{f: spec.LazySummary}
	}
	pt := reflect.TypeFor[P]()
	if pt != noneType {
		s.params = pt
	}
	if k := pt.Kind(); k != reflect.Struct && (k != reflect.Map || pt.Key().Kind() != reflect.String) {
		s.err = fmt.Errorf("params type %v is a %v; use a struct type (or a map with string keys), or section.None for no params", pt, k)
	}
	if spec.LazyChildren != nil {
		switch {
		case len(spec.Children) > 0:
			s.err = errors.New("both Children and LazyChildren are set; use one")
		case spec.Summary == "" && spec.LazySummary == nil || spec.Visibility != visibility.Const(visibility.Summary):
			s.err = errors.New("LazyChildren needs a summary and Visibility: visibility.Const(visibility.Summary): a folded section shows in full only when it is opened")
		}
	}
	if spec.LazySummary != nil && spec.Summary != "" {
		s.err = fmt.Errorf("both Summary and LazySummary are set; use one")
	}
	switch {
	case spec.Enabled != nil && spec.EnabledIn != nil:
		s.err = errors.Join(s.err, errors.New("both Enabled and EnabledIn are set; use one"))
	case spec.Enabled != nil:
		f := spec.Enabled
		s.enabled = func(p any, _ *session.Session) bool { return f(p.(P)) }
	case spec.EnabledIn != nil:
		f := spec.EnabledIn
		s.enabled = func(p any, sess *session.Session) bool { return f(p.(P), sess) }
		s.inSess = true
	}
	if spec.Defaults != nil {
		s.defaults = *spec.Defaults
	}
	s.zero = *new(P)
	if spec.Content != nil {
		if spec.Body != "" && s.err == nil {
			s.err = fmt.Errorf("both Body and Content are set; use one")
		}
		f := spec.Content
		s.content = func(p any) (string, error) { return f(p.(P)) }
	}
	if s.err == nil {
		s.simple, s.body, s.err = compile("body", spec.Key, spec.Body, spec.Funcs, pt)
	}
	if s.err == nil {
		s.summaryT.simple, s.summaryT.tmpl, s.err = compile("summary", spec.Key, spec.Summary, spec.Funcs, pt)
	}
	if s.err == nil {
		s.briefT.simple, s.briefT.tmpl, s.err = compile("brief", spec.Key, spec.Brief, spec.Funcs, pt)
	}
	return s
}

// compiled is a text compiled as a template over the params: the fast
// simple form, or text/template; neither when the text has no actions.
type compiled struct {
	simple *simpleBody
	tmpl   *guarded
}

// compile compiles src, the section's kind of text ("body", "summary" or
// "brief"), as a template over params of type pt when it has actions: to a
// simple body when it only references fields (and there are no Funcs), to
// a text/template otherwise, checked against pt.
func compile(kind, name, src string, funcs template.FuncMap, pt reflect.Type) (*simpleBody, *guarded, error) {
	if !strings.Contains(src, "{{") {
		return nil, nil, nil
	}
	if funcs == nil {
		if b, ok := cachedSimple(src, pt); ok {
			return b, nil, nil
		}
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(boundedFuncs).Funcs(funcs).Parse(src)
	if err != nil {
		return nil, nil, fmt.Errorf("%s template: %w", kind, err)
	}
	if err := checkFields(t, pt); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Template = kind
		}
		return nil, nil, err
	}
	return nil, guard(t, funcs), nil
}

// execute runs the compiled template with params, charging w; ok is
// false when there is none, and the text is then the source as it is.
func (c *compiled) execute(w *Work, params any) (text string, ok bool, err error) {
	switch {
	case c.simple != nil:
		text, err = c.simple.execute(params)
		return text, true, err
	case c.tmpl != nil:
		b := boundedBuilder{max: MaxBodyBytes}
		if err = c.tmpl.execute(w, &b, params); err != nil {
			return "", true, explainField(err, params)
		}
		return b.String(), true, nil
	}
	return "", false, nil
}

// Key returns the section's key.
func (s *Section) Key() string { return s.key }

// Title returns the section's title, trimmed of surrounding space.
func (s *Section) Title() string { return s.title }

// Defaults returns the params the section renders with when Bind is given
// none of its type ([Spec].Defaults), and whether it has any.
func (s *Section) Defaults() (any, bool) { return s.defaults, s.defaults != nil }

// ReadsSession reports whether the section's enabled predicate reads the
// session ([Spec].EnabledIn), so that it is asked again at every render.
func (s *Section) ReadsSession() bool { return s.inSess }

// OpensInPlace reports whether opening the section shows it in place even
// without tools (see [Spec].OpensInPlace).
func (s *Section) OpensInPlace() bool { return s.inPlace }

// Separate reports whether the section opens only by its own key (see
// [Spec].Separate).
func (s *Section) Separate() bool { return s.separate }

// Priority returns the section's budget priority.
func (s *Section) Priority() int { return s.priority }

// Selector returns the section's visibility selector; nil means FULL.
func (s *Section) Selector() visibility.Selector { return s.vis }

// Children returns the section's subsections, in order: none while it is
// folded (see [Section.Folded]).
func (s *Section) Children() []*Section { return append([]*Section(nil), s.kids()...) }

// kids returns the children without copying them.
func (s *Section) kids() []*Section {
	if s.later != nil {
		if kids := s.unfolded.Load(); kids != nil {
			return *kids
		}
	}
	return s.children
}

// Tools returns the tools the section itself declares.
func (s *Section) Tools() []*tools.Tool { return append([]*tools.Tool(nil), s.tools...) }

// ParamsType returns the section's params type, nil for [None].
func (s *Section) ParamsType() reflect.Type { return s.params }

// Source returns the body as declared: the template text, or the fixed text.
func (s *Section) Source() string { return s.bodySrc }

// Dynamic reports whether the body is computed at every render (a
// template, or Content) rather than fixed text.
func (s *Section) Dynamic() bool { return s.body != nil || s.simple != nil || s.content != nil }

// Live reports whether the body comes from Content, computed at every
// render rather than once per set of params.
func (s *Section) Live() bool { return s.content != nil }

// Enabled reports whether the section renders with params in sess (which
// may be nil, and which only an EnabledIn predicate reads). A panicking
// predicate is an error.
func (s *Section) Enabled(params any, sess *session.Session) (ok bool, err error) {
	if s.enabled == nil {
		return true, nil
	}
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("enabled predicate panicked: %v", p)
		}
	}()
	return s.enabled(paramsOrZero(s, params), sess), nil
}

// EnabledUnbound reports whether the section's Enabled predicate accepts
// the zero value of its params type: what decides, when Bind has no params
// for the section and it has no defaults, whether it may render (see
// [Spec].Defaults). A section without a predicate may; one whose
// predicate reads the session is not asked (it may, at some render).
func (s *Section) EnabledUnbound() (bool, error) {
	if s.enabled == nil || s.inSess {
		return true, nil
	}
	return s.Enabled(s.zero, nil)
}

// Body returns the section's body for params: the template executed, or
// Content called, or the static text. It is not yet dedented or trimmed.
// Its template work is its own; see [Section.BodyWith].
func (s *Section) Body(params any) (string, error) { return s.BodyWith(nil, params) }

// BodyWith is [Section.Body] taking its template work from w, the work
// of the render it is part of.
func (s *Section) BodyWith(w *Work, params any) (text string, err error) {
	switch {
	case s.content != nil:
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("content panicked: %v", p)
			}
		}()
		return s.content(paramsOrZero(s, params))
	case s.simple != nil:
		return s.simple.execute(paramsOrZero(s, params))
	case s.body != nil:
		b := boundedBuilder{max: MaxBodyBytes}
		dot := paramsOrZero(s, params)
		if err := s.body.execute(w, &b, dot); err != nil {
			return "", fmt.Errorf("body template: %w", explainField(err, dot))
		}
		return b.String(), nil
	}
	return s.bodySrc, nil
}

// AppendBody appends the body rendered with params to dst and returns the
// extended slice, as Body would return it; on error dst is returned as it
// came, possibly with part of the body appended. Its template work is its
// own; see [Section.AppendBodyWith].
func (s *Section) AppendBody(dst []byte, params any) ([]byte, error) {
	return s.AppendBodyWith(nil, dst, params)
}

// AppendBodyWith is [Section.AppendBody] taking its template work from w.
func (s *Section) AppendBodyWith(w *Work, dst []byte, params any) ([]byte, error) {
	switch {
	case s.simple != nil:
		return s.simple.appendTo(dst, paramsOrZero(s, params))
	case s.body == nil && s.content == nil:
		return append(dst, s.bodySrc...), nil
	}
	text, err := s.BodyWith(w, params)
	if err != nil {
		return dst, err
	}
	return append(dst, text...), nil
}

func paramsOrZero(s *Section, params any) any {
	if params == nil {
		return None{}
	}
	return params
}

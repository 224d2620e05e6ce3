package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// Part is one prompt of a [Disclosure] and the options it renders with.
type Part struct {
	Prompt  *Prompt
	Options []RenderOption
}

// Disclosure keeps prompts rendered for one session and opens their
// summarized sections. It is the one path by which a model's open_sections
// call changes what the model is shown, for every front end: overrides go
// into the session as events, the prompts render again, the tools of the
// opened sections are offered, content-only sections are written to context
// files, and the call is answered with what opened.
//
// A Disclosure holds one or more parts, each a bound prompt rendered on its
// own (an agent renders its instructions into the system message and its
// environments' screens into the newest message); section paths are unique
// across parts, and one open_sections tool opens sections of any part.
//
// A Disclosure is safe for concurrent use; openings apply one at a time.
// [Disclosure.ToolContext] is what its tools are called with, and
// [Disclosure.HelpSections] feeds a help tool.
type Disclosure struct {
	sess    *session.Session
	fs      afero.Fs
	parts   []Part
	content bool // answers carry the opened sections' content
	open    *tools.Tool

	mu       sync.Mutex // guards rendered, and parts once created
	rendered []*Rendered
}

// DisclosureOption configures a [Disclosure].
type DisclosureOption func(*Disclosure)

// WithContentAnswers makes the answer to an opening carry the opened
// sections in full, for models that do not see the prompt render again: an
// MCP client's, or a run that keeps its system message unchanged.
func WithContentAnswers() DisclosureOption {
	return func(d *Disclosure) { d.content = true }
}

// NewDisclosure returns a disclosure of parts for sess (nil for a new
// session), writing context files to fs (nil for none). It fails when two
// parts have a section at the same path: open_sections could not tell them
// apart. Call [Disclosure.Render] before anything else.
func NewDisclosure(sess *session.Session, fs afero.Fs, parts []Part, opts ...DisclosureOption) (*Disclosure, error) {
	if len(parts) == 0 {
		return nil, errors.New("prompt: new disclosure: no prompt")
	}
	if sess == nil {
		sess = session.New()
	}
	owner := map[string]int{}
	for i, part := range parts {
		if part.Prompt == nil {
			return nil, fmt.Errorf("prompt: new disclosure: part %d has no prompt", i+1)
		}
		for _, p := range part.Prompt.t.Paths() {
			if j, dup := owner[p]; dup {
				return nil, fmt.Errorf("prompt: new disclosure: parts %d and %d both have a section %q: open_sections could not tell them apart; rename one", j+1, i+1, p)
			}
			owner[p] = i
		}
	}
	d := &Disclosure{sess: sess, fs: fs, parts: slices.Clone(parts)}
	for _, o := range opts {
		o(d)
	}
	d.open = tools.MustNew(OpenSectionsName, openSectionsDescription, d.openSections).WithHints(openSectionsHints)
	return d, nil
}

// Session returns the session the disclosure renders with.
func (d *Disclosure) Session() *session.Session { return d.sess }

// ToolContext is what tools get when the disclosure calls them.
func (d *Disclosure) ToolContext() tools.Context { return tools.Context{Session: d.sess, FS: d.fs} }

// Render renders every part again with the session as it is now, as after
// a command changed what environments' sections show.
func (d *Disclosure) Render() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.render()
}

// render renders every part with the session. The holder of mu calls it.
func (d *Disclosure) render() error { return d.renderIn(d.sess) }

// renderIn renders every part with sess (the disclosure's session, or a
// transaction's view of it), after unfolding what sess shows in full;
// when it fails, the parts stay as they were, matching the renders kept.
// The holder of mu calls it.
func (d *Disclosure) renderIn(sess *session.Session) error {
	old := d.parts // changed only by unfolding, which needs a copy to undo
	if d.folded() {
		old = slices.Clone(d.parts)
	}
	if err := d.unfoldOpened(sess); err != nil {
		d.parts = old
		return err
	}
	out := make([]*Rendered, len(d.parts))
	for i, part := range d.parts {
		r, err := part.Prompt.Render(sess, d.fs, part.Options...)
		if err != nil {
			d.parts = old
			return err
		}
		out[i] = r
	}
	d.rendered = out
	return nil
}

// Rendered returns the latest render of part i, or nil before the first
// [Disclosure.Render] and when there is no part i (parts count from 0, as
// for [Disclosure.Remove]).
func (d *Disclosure) Rendered(i int) *Rendered {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i < 0 || i >= len(d.rendered) {
		return nil
	}
	return d.rendered[i]
}

// Tools returns the tools to offer now: those of every part's latest
// render, in part order, then open_sections when any part shows a summary.
func (d *Disclosure) Tools() []*tools.Tool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tools()
}

func (d *Disclosure) tools() []*tools.Tool {
	var list []*tools.Tool
	summarized := false
	for _, r := range d.rendered {
		for _, t := range r.tools {
			if t.Name() == OpenSectionsName {
				summarized = true
				continue
			}
			list = append(list, t)
		}
	}
	if summarized {
		list = append(list, d.open)
	}
	return list
}

// HelpSections lists the sections the latest renders show as summaries,
// part by part, for a help tool ([tools.NewHelp]).
func (d *Disclosure) HelpSections() []tools.HelpSection {
	d.mu.Lock()
	rendered := d.rendered
	d.mu.Unlock()
	var out []tools.HelpSection
	for _, r := range rendered {
		pr := r.pr
		for i, n := range r.p.t.nodes {
			if pr.enabled(i) && r.st[i].is(visibleF) && r.st[i].mode == visibility.Summary {
				out = append(out, tools.HelpSection{Key: n.path, Title: n.sec.Title(), Summary: r.summary(i), HasTools: pr.hasTools(i)})
			}
		}
	}
	return out
}

// DeferredTools is a section whose own tools are not offered now, because
// the section is not shown in full: what opening it would offer.
type DeferredTools struct {
	Path    string // the section's dotted path, a key open_sections takes
	Title   string
	Summary string
	Tools   []*tools.Tool // the section's own tools, in declaration order
}

// Deferred lists, part by part and in tree order, every enabled section of
// the latest renders that carries tools of its own and is not shown in
// full. A front end that keeps its tool list fixed for a run (to keep a
// provider's prompt cache) declares these up front as deferred tools, each
// group loadable when its section opens.
func (d *Disclosure) Deferred() []DeferredTools {
	d.mu.Lock()
	rendered := d.rendered
	d.mu.Unlock()
	var out []DeferredTools
	for _, r := range rendered {
		pr := r.pr
		for i, n := range r.p.t.nodes {
			ts := n.sec.Tools()
			if !pr.enabled(i) || len(ts) == 0 || (r.st[i].is(visibleF) && r.st[i].mode == visibility.Full) {
				continue
			}
			out = append(out, DeferredTools{Path: n.path, Title: n.sec.Title(), Summary: r.summary(i), Tools: ts})
		}
	}
	return out
}

// Call runs t, offered by the disclosure or not, with the disclosure's
// session and filesystem. When t asks for sections to open
// ([ErrVisibilityExpansion], as open_sections does for sections with
// tools), Call opens them through [Disclosure.Expand] and answers with the
// opening; an opening refused ([*OpenError]: with the sections open, the
// prompts did not render, or did not fit their budget) is a failed result
// that says why, and changes nothing. Other errors are t's (see
// [tools.Tool.Call]).
func (d *Disclosure) Call(ctx context.Context, t *tools.Tool, args json.RawMessage) (tools.Result, error) {
	res, err := d.call(ctx, t, args)
	if refused, ok := errors.AsType[*OpenError](err); ok {
		return tools.Result{Message: refused.Error()}, nil
	}
	return res, err
}

// call is Call with a refused opening left an error, for Open.
func (d *Disclosure) call(ctx context.Context, t *tools.Tool, args json.RawMessage) (tools.Result, error) {
	res, err := t.Call(ctx, d.ToolContext(), args)
	if errors.Is(err, ErrVisibilityExpansion) {
		op, err := d.Expand(err)
		if err != nil {
			return tools.Result{Message: err.Error()}, err
		}
		return op.Result(), nil
	}
	return res, err
}

// Expand opens what an expansion error asks for (a join of several is
// opened at once): it renders every part again with the overrides on
// trial, dispatches them to the session once the render succeeded, and
// returns what opened, with the tools now offered that were not before.
//
// A failed opening changes nothing: no event reaches the session, and the
// parts and their renders stay as they were. When the render with the
// overrides fails, as when the sections do not fit a part's budget, the
// error is an [*OpenError] whose message, written for the model, says so.
func (d *Disclosure) Expand(err error) (*Opened, error) {
	list := expansions(err)
	if len(list) == 0 {
		return nil, fmt.Errorf("prompt: expand: not a visibility expansion error: %v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	parts, rendered := slices.Clone(d.parts), d.rendered
	op, err := d.expand(list)
	if err != nil {
		d.parts, d.rendered = parts, rendered
		return nil, err
	}
	return op, nil
}

// expand is Expand once the lock is held; on failure the caller puts the
// parts and renders back.
func (d *Disclosure) expand(list []*VisibilityExpansionError) (*Opened, error) {
	before := map[string]bool{}
	for _, t := range d.tools() {
		before[t.Name()] = true
	}
	op := &Opened{}
	all := Overrides{}
	for _, ve := range list {
		for _, k := range ve.Keys {
			if !slices.Contains(op.Keys, k) {
				op.Keys = append(op.Keys, k)
			}
		}
		if op.Reason == "" {
			op.Reason = ve.Reason
		}
		if ve.Answer != "" {
			op.Answer = strings.TrimSpace(op.Answer + "\n\n" + ve.Answer)
		}
		if key, ok := d.unknown(ve.Keys); ok {
			return nil, fmt.Errorf("prompt: expand: no section %q in any part", key)
		}
		if err := d.unfold(ve.Keys); err != nil {
			return nil, fmt.Errorf("prompt: expand: %w", err)
		}
		ov := ve.Overrides
		if ov == nil {
			var err error
			if ov, err = d.overridesFor(ve.Keys); err != nil {
				return nil, fmt.Errorf("prompt: expand: %w", err)
			}
		}
		for p, m := range ov {
			all[p] = m
		}
	}
	op.Paths = all.Paths()
	// The answer's content is built from the trial render, before the
	// opening is committed: an opening whose content cannot be built
	// changes nothing either.
	content := func() error {
		if !d.content {
			return nil
		}
		var err error
		op.Content, err = d.standalone(op.Keys)
		return err
	}
	if err := d.renderOpening(op.Keys, all, content); err != nil {
		return nil, fmt.Errorf("prompt: expand: %w", err)
	}
	for _, t := range d.tools() {
		if !before[t.Name()] {
			op.NewTools = append(op.NewTools, t.Name())
		}
	}
	return op, nil
}

// overridesFor returns what shows the sections at keys in full against the
// latest renders, as [Rendered.Open] does: nothing for a key shown in full
// already.
func (d *Disclosure) overridesFor(keys []string) (Overrides, error) {
	all := Overrides{}
	for _, key := range keys {
		found := false
		for _, r := range d.rendered {
			if _, ok := r.p.t.index(key); !ok {
				continue
			}
			ov, err := r.Open(key)
			if err != nil {
				return nil, err
			}
			for p, m := range ov {
				all[p] = m
			}
			found = true
			break
		}
		if !found {
			return nil, fmt.Errorf("no section %q in any part", key)
		}
	}
	return all, nil
}

// Open opens the sections at keys as an open_sections call would, without
// a model: it checks them, and opens those with tools in place or writes
// the others to context files. An opening refused is an [*OpenError], and
// changes nothing.
func (d *Disclosure) Open(ctx context.Context, keys []string, reason string) (*Opened, error) {
	if keys == nil {
		keys = []string{} // no keys, which the handler refuses as such, not a JSON null
	}
	args, err := json.Marshal(OpenSectionsInput{SectionKeys: keys, Reason: reason})
	if err != nil {
		return nil, fmt.Errorf("prompt: open: %w", err)
	}
	res, err := d.call(ctx, d.open, args)
	if err != nil {
		return nil, err
	}
	if !res.Success {
		return nil, fmt.Errorf("prompt: open: %s", res.Message)
	}
	return res.Value.(*Opened), nil
}

// openSections is the disclosure's open_sections handler: it routes each
// key to the part that has it and checks the whole request against the
// latest renders before anything changes. When any requested section has
// tools, every requested section opens in place (through Expand, by the
// error it returns); otherwise each is written to its context file.
func (d *Disclosure) openSections(_ context.Context, tc tools.Context, in OpenSectionsInput) (*Opened, error) {
	keys, err := requestedKeys(in.SectionKeys)
	if err != nil {
		return nil, err
	}
	var unknown string
	rendered, err := func() (r []*Rendered, err error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if key, ok := d.unknown(keys); ok {
			unknown = key
		} else {
			err = d.unfold(keys)
		}
		return d.rendered, err
	}()
	switch {
	case rendered == nil:
		return nil, tools.Halt(errors.New("prompt: open_sections: the disclosure has not rendered yet; call Render first"))
	case unknown != "":
		return nil, unknownSection(unknown)
	case err != nil:
		return nil, fmt.Errorf("cannot open %s: %w", strings.Join(keys, ", "), err)
	}
	byPart := make([][]string, len(rendered))
	for _, key := range keys {
		part := -1
		for i, r := range rendered {
			if _, ok := r.p.t.index(key); ok {
				part = i
				break
			}
		}
		if part < 0 {
			return nil, unknownSection(key)
		}
		byPart[part] = append(byPart[part], key)
	}
	reqs := make([]openRequest, len(rendered))
	withTools := false
	for i, r := range rendered {
		if len(byPart[i]) == 0 {
			continue
		}
		req, err := r.request(byPart[i])
		if err != nil {
			return nil, err
		}
		reqs[i] = req
		withTools = withTools || req.withTools
	}
	if withTools {
		ov := Overrides{}
		for i, r := range rendered {
			for p, m := range r.overrides(reqs[i].idx) {
				ov[p] = m
			}
		}
		return nil, tools.Halt(&VisibilityExpansionError{Keys: keys, Reason: in.Reason, Overrides: ov})
	}
	fs := orFS(tc.FS, d.fs)
	op := &Opened{Keys: keys, Reason: in.Reason}
	// Write in request order, whichever part each key is in.
	for _, key := range keys {
		for i, r := range rendered {
			if !slices.Contains(byPart[i], key) {
				continue
			}
			j, _ := r.p.t.index(key)
			files, err := r.writeContexts(fs, []int{j})
			if err != nil {
				return nil, err
			}
			op.Files = append(op.Files, files...)
		}
	}
	return op, nil
}

// standalone returns the sections at keys in full, each as a document of
// its own, joined by blank lines.
func (d *Disclosure) standalone(keys []string) (string, error) {
	var docs []string
	for _, key := range keys {
		for i, part := range d.parts {
			if _, ok := part.Prompt.t.index(key); !ok {
				continue
			}
			doc, err := d.rendered[i].Standalone(key)
			if err != nil {
				return "", err
			}
			docs = append(docs, strings.TrimRight(doc, "\n"))
		}
	}
	return strings.Join(docs, "\n\n"), nil
}

// Opened is what an opening did: the answer to an open_sections call made
// through a [Disclosure], and its result's Value.
type Opened struct {
	Keys   []string `json:"keys"`             // the requested keys, in request order, each once
	Reason string   `json:"reason,omitempty"` // the model's reason
	// Paths are the sections now shown in full (the requested ones and
	// their summarized ancestors), sorted; none when the sections were
	// written to context files instead.
	Paths []string `json:"opened,omitempty"`
	// Files are the context files written for content-only sections, in
	// request order.
	Files []string `json:"written_files,omitempty"`
	// NewTools are the tools offered now that were not before.
	NewTools []string `json:"new_tools,omitempty"`
	// Content is the opened sections in full, when the disclosure answers
	// with content ([WithContentAnswers]).
	Content string `json:"content,omitempty"`
	// Answer is what the tool that asked for the opening said besides
	// ([VisibilityExpansionError].Answer), such as the matches of a search.
	Answer string `json:"answer,omitempty"`
}

// Expanded reports whether sections opened in place, so the prompts and
// the tools offered changed.
func (o *Opened) Expanded() bool { return len(o.Paths) > 0 }

// String is the message the model reads (docs/design.md, open_sections):
// the context files written, or the sections opened, the new tools and,
// when asked for, the content.
func (o *Opened) String() string {
	if !o.Expanded() {
		if len(o.Files) == 0 && o.Answer != "" {
			return o.Answer // nothing needed opening
		}
		return writtenMessage(o.Files)
	}
	var b strings.Builder
	b.WriteString("Opened sections: " + strings.Join(o.Paths, ", ") + ".")
	if len(o.NewTools) > 0 {
		b.WriteString(" New tools: " + strings.Join(o.NewTools, ", ") + ".")
	}
	if o.Answer != "" {
		b.WriteString("\n\n" + o.Answer)
	}
	if o.Content != "" {
		b.WriteString("\n\n" + o.Content)
	}
	return b.String()
}

// Result is the opening as the successful result of the open_sections call.
func (o *Opened) Result() tools.Result {
	return tools.Result{Message: o.String(), Value: o, Success: true}
}

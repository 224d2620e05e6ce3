package prompt

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

// Unfold returns the prompt with the folded sections at or above paths
// unfolded, and those below them that show with them when they are
// written out in full (all but those under a separate section): their
// children found ([section.Spec] LazyChildren) and the template built
// again with them, bound to the same params. A path may lie below a
// folded section, where the template has no section yet
// ("skills.pdf.scripts-extract-py" below the folded "skills.pdf"). It
// returns p itself when there is nothing to unfold, and an error when the
// children found break the rules a template checks (see [New]).
//
// A [Disclosure] unfolds what it opens, and what the session's overrides
// show in full, before it renders. Call Unfold before rendering a prompt
// with overrides set some other way ([Rendered.Open]), so that an opened
// section shows its children.
func (p *Prompt) Unfold(paths ...string) (*Prompt, error) {
	u, err := p.unfold(paths, true)
	if err != nil {
		return nil, fmt.Errorf("prompt: unfold: %w", err)
	}
	return u, nil
}

// maxUnfoldRounds bounds how many times unfold builds the template again
// for one call: sections whose children are folded sections in turn,
// level after level.
const maxUnfoldRounds = 32

// unfold is Unfold; below says whether to unfold what shows with each
// path when it is written out in full, too.
func (p *Prompt) unfold(paths []string, below bool) (*Prompt, error) {
	for round := 0; p.t.folded; round++ {
		var found []int
		for _, path := range paths {
			if i, ok := p.foldedAt(path); ok {
				found = append(found, i)
			} else if i, ok := p.t.index(path); ok && below {
				found = append(found, p.foldedBelow(i)...)
			}
		}
		if len(found) == 0 {
			return p, nil
		}
		if round == maxUnfoldRounds {
			return nil, fmt.Errorf("more than %d levels of folded sections below %s", maxUnfoldRounds, strings.Join(paths, ", "))
		}
		for _, i := range found {
			n := &p.t.nodes[i]
			if err := n.sec.Unfold(p.checkChildren); err != nil {
				return nil, err // it names the section
			}
			if n.sec.Folded() {
				return nil, fmt.Errorf("%s is still folded", n.path)
			}
		}
		t, err := New(p.t.ns, p.t.key, p.t.roots...)
		if err != nil {
			return nil, err
		}
		if p, err = t.Bind(p.args...); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkChildren checks the children found for a folded section of p
// against the rest of the prompt, before the section keeps them: none of
// their tools may be named like open_sections or like a tool the prompt
// has, and the params they take must be among those p was bound with (or
// not be needed, by Bind's rules). Children that failed here would fail
// every template built from the section from then on.
func (p *Prompt) checkChildren(kids []*section.Section) error {
	if len(kids) == 0 {
		return nil
	}
	taken := map[string]string{OpenSectionsName: "open_sections, the prompt's own tool"}
	for _, n := range p.t.nodes {
		for _, tl := range n.sec.Tools() {
			taken[tl.Name()] = "a tool of " + n.path
		}
	}
	var errs []error
	var walk func(list []*section.Section)
	walk = func(list []*section.Section) {
		for _, k := range list {
			for _, tl := range k.Tools() {
				if where, ok := taken[tl.Name()]; ok {
					errs = append(errs, fmt.Errorf("section %s: tool name %q is taken by %s; rename the tool", k.Key(), tl.Name(), where))
				}
			}
			walk(k.Children())
		}
	}
	walk(kids)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	t, err := New(p.t.ns, p.t.key, kids...)
	if err != nil {
		return err
	}
	var args []any
	for _, a := range p.args {
		v := reflect.ValueOf(a)
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if slices.Contains(t.needs, v.Type()) {
			args = append(args, a)
		}
	}
	_, err = t.Bind(args...)
	return err
}

// foldedBelow returns the folded sections below node i that show with it
// when it is written out in full: those not under a separate section (see
// [section.Spec] Separate).
func (p *Prompt) foldedBelow(i int) []int {
	var out []int
	for j := i + 1; j < p.t.nodes[i].end; {
		n := &p.t.nodes[j]
		if n.sec.Separate() {
			j = n.end
			continue
		}
		if n.folded {
			out = append(out, j)
		}
		j++
	}
	return out
}

// foldedAt returns the node of the folded section at path or at the
// nearest of its ancestors, when the template has one.
func (p *Prompt) foldedAt(path string) (int, bool) {
	for end := 0; end < len(path); {
		next := strings.IndexByte(path[end+1:], '.')
		if next < 0 {
			end = len(path)
		} else {
			end += 1 + next
		}
		i, ok := p.t.index(path[:end])
		switch {
		case !ok:
			return 0, false
		case p.t.nodes[i].folded:
			return i, true
		}
	}
	return 0, false
}

// unknown returns the first of keys that is neither a section's in a
// part nor below a folded section: a request naming it fails, and
// nothing unfolds for it. The holder of mu calls it.
func (d *Disclosure) unknown(keys []string) (string, bool) {
	for _, key := range keys {
		if !slices.ContainsFunc(d.parts, func(part Part) bool {
			_, in := part.Prompt.t.index(key)
			_, below := part.Prompt.foldedAt(key)
			return in || below
		}) {
			return key, true
		}
	}
	return "", false
}

// unfold unfolds, in every part, the folded sections at or above keys
// and those below them that show with them in a context file
// ([Prompt.Unfold]), and renders again when that changed a part and the
// disclosure has rendered: a section opened by its key, or by a key below
// it, shows its children. When unfolding or the render fails, the parts
// stay as they were. The holder of mu calls it, with keys that are not
// unknown.
func (d *Disclosure) unfold(keys []string) error {
	old := slices.Clone(d.parts)
	changed, err := d.unfoldParts(keys, true)
	if err == nil && changed && d.rendered != nil {
		err = d.render()
	}
	if err != nil {
		d.parts = old
	}
	return err
}

// unfoldOpened unfolds the folded sections at or above the paths the
// overrides of sess show in full: opened in an earlier render, or in an
// earlier run of a session read back, or on trial. The holder of mu calls
// it before every render.
func (d *Disclosure) unfoldOpened(sess *session.Session) error {
	if !d.folded() {
		return nil
	}
	if err := visibility.Register(sess); err != nil {
		return err
	}
	ov := visibility.Get(sess)
	var full []string
	for _, p := range ov.Paths() {
		if m, _ := ov.Mode(p); m == visibility.Full {
			full = append(full, p)
		}
	}
	_, err := d.unfoldParts(full, false)
	return err
}

// folded reports whether some part has a folded section. The holder of mu
// calls it.
func (d *Disclosure) folded() bool {
	return slices.ContainsFunc(d.parts, func(p Part) bool { return p.Prompt.t.folded })
}

// unfoldParts puts each part's prompt unfolded at paths in its place (see
// Prompt.unfold), and reports whether any changed.
func (d *Disclosure) unfoldParts(paths []string, below bool) (changed bool, err error) {
	if len(paths) == 0 {
		return false, nil
	}
	for i, part := range d.parts {
		p, err := part.Prompt.unfold(paths, below)
		if err != nil {
			return changed, err
		}
		if p != part.Prompt {
			d.parts[i].Prompt = p
			changed = true
		}
	}
	return changed, nil
}

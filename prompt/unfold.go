package prompt

import (
	"fmt"
	"slices"
	"strings"

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
	for p.t.folded {
		found := false
		for _, path := range paths {
			if i, ok := p.foldedAt(path); ok {
				p.t.nodes[i].sec.Unfold()
				found = true
				continue
			}
			// The section at path is there: unfold what shows with it
			// when it is written out in full.
			if i, ok := p.t.index(path); ok {
				for _, j := range p.foldedBelow(i) {
					p.t.nodes[j].sec.Unfold()
					found = true
				}
			}
		}
		if !found {
			return p, nil
		}
		t, err := New(p.t.ns, p.t.key, p.t.roots...)
		if err != nil {
			return nil, fmt.Errorf("prompt: unfold: %w", err)
		}
		if p, err = t.Bind(p.args...); err != nil {
			return nil, fmt.Errorf("prompt: unfold: %w", err)
		}
	}
	return p, nil
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

// unfold unfolds the folded sections at or above paths in every part
// ([Prompt.Unfold]), and renders again when that changed a part and the
// disclosure has rendered: a section opened by its key, or by a key below
// it, shows its children. The holder of mu calls it.
func (d *Disclosure) unfold(paths []string) error {
	changed, err := d.unfoldParts(paths)
	if err != nil || !changed || d.rendered == nil {
		return err
	}
	return d.render()
}

// unfoldOpened unfolds the folded sections that the session's overrides
// show in full, or show a section below: opened in an earlier render, or
// in an earlier run of a session read back. The holder of mu calls it
// before every render.
func (d *Disclosure) unfoldOpened() error {
	if !slices.ContainsFunc(d.parts, func(p Part) bool { return p.Prompt.t.folded }) {
		return nil
	}
	if err := visibility.Register(d.sess); err != nil {
		return err
	}
	ov := visibility.Get(d.sess)
	var full []string
	for _, p := range ov.Paths() {
		if m, _ := ov.Mode(p); m == visibility.Full {
			full = append(full, p)
		}
	}
	_, err := d.unfoldParts(full)
	return err
}

// unfoldParts puts each part's prompt unfolded at paths in its place, and
// reports whether any changed.
func (d *Disclosure) unfoldParts(paths []string) (changed bool, err error) {
	if len(paths) == 0 {
		return false, nil
	}
	for i, part := range d.parts {
		p, err := part.Prompt.Unfold(paths...)
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

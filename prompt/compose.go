package prompt

import (
	"github.com/unfold-dev/unfold/section"
)

// Roots returns the template's top-level sections, in order.
func (t *Template) Roots() []*section.Section {
	var roots []*section.Section
	for _, n := range t.nodes {
		if n.parent < 0 {
			roots = append(roots, n.sec)
		}
	}
	return roots
}

// With returns a template of the same namespace and key whose top-level
// sections are t's followed by sections, validated as [New] validates: a
// prompt file with the skills section, or with the environments' sections.
func (t *Template) With(sections ...*section.Section) (*Template, error) {
	return New(t.ns, t.key, append(t.Roots(), sections...)...)
}

package prompt

import (
	"slices"
	"strings"
)

// writeSuffix writes the line that follows a summary, telling the model how
// to open the section at path. kids lists its enabled direct children.
func writeSuffix(b *strings.Builder, path string, kids enabledKids, hasTools bool) {
	children := kids.any()
	b.WriteString("\n\n---\n")
	switch {
	case hasTools && !children:
		b.WriteString("[This section is summarized. To view full content and access additional tools, call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\".]")
	case hasTools:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to view full content including subsections: ")
		kids.writeKeys(b)
		b.WriteString(". Additional tools may become available.]")
	case !children:
		b.WriteString("[This section is summarized. To view full content, call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\". The content will be written to context/")
		b.WriteString(path)
		b.WriteString(".md for you to read.]")
	default:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to write content (including subsections: ")
		kids.writeKeys(b)
		b.WriteString(") to context/")
		b.WriteString(path)
		b.WriteString(".md.]")
	}
}

// enabledKids is a section's enabled direct children.
type enabledKids struct {
	nodes    []node
	children []int  // indices of all direct children
	enabled  []bool // per node
}

func (k enabledKids) any() bool {
	return slices.ContainsFunc(k.children, func(c int) bool { return k.enabled[c] })
}

// writeKeys writes the children's keys, separated by ", ".
func (k enabledKids) writeKeys(b *strings.Builder) {
	first := true
	for _, c := range k.children {
		if !k.enabled[c] {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		b.WriteString(k.nodes[c].sec.Key())
		first = false
	}
}

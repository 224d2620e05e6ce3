package prompt

import (
	"slices"
	"strconv"
	"strings"
)

// writeSuffix writes the line that follows a summary, telling the model how
// to open the section at path. kids lists its enabled direct children.
func writeSuffix(b *strings.Builder, path string, kids enabledKids, hasTools bool) {
	writeSuffixAs(b, path, kids, hasTools, false)
}

// writeSuffixAs is writeSuffix, with the compact suffix when compact: it
// gives the children's number where the default one lists their keys; a
// budget uses it when that lets more sections show in full.
func writeSuffixAs(b *strings.Builder, path string, kids enabledKids, hasTools, compact bool) {
	children := kids.any()
	b.WriteString("\n\n---\n")
	switch {
	case hasTools && !children:
		b.WriteString("[This section is summarized. To view full content and access additional tools, call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\".]")
	case hasTools && compact:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to view full content including ")
		kids.writeCount(b)
		b.WriteString(". Additional tools may become available.]")
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
		b.WriteString(contextName(path))
		b.WriteString(" for you to read.]")
	case compact:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to write content (including ")
		kids.writeCount(b)
		b.WriteString(") to context/")
		b.WriteString(contextName(path))
		b.WriteString(".]")
	default:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to write content (including subsections: ")
		kids.writeKeys(b)
		b.WriteString(") to context/")
		b.WriteString(contextName(path))
		b.WriteString(".]")
	}
}

// enabledKids is a section's enabled direct children.
type enabledKids struct {
	nodes    []node
	children []int     // indices of all direct children
	pr       *prepared // which nodes are enabled
}

func (k enabledKids) any() bool {
	return slices.ContainsFunc(k.children, k.pr.enabled)
}

// count returns the number of enabled children.
func (k enabledKids) count() int {
	n := 0
	for _, c := range k.children {
		if k.pr.enabled(c) {
			n++
		}
	}
	return n
}

// writeCount writes "1 subsection" or "N subsections".
func (k enabledKids) writeCount(b *strings.Builder) {
	n := k.count()
	b.WriteString(strconv.Itoa(n))
	if n == 1 {
		b.WriteString(" subsection")
	} else {
		b.WriteString(" subsections")
	}
}

// writeKeys writes the children's keys, separated by ", ".
func (k enabledKids) writeKeys(b *strings.Builder) {
	first := true
	for _, c := range k.children {
		if !k.pr.enabled(c) {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		b.WriteString(k.nodes[c].sec.Key())
		first = false
	}
}

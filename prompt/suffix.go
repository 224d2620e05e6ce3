package prompt

import "strings"

// writeSuffix writes the line that follows a summary, telling the model how
// to open the section at path. children are the keys of its enabled direct
// children.
func writeSuffix(b *strings.Builder, path string, children []string, hasTools bool) {
	b.WriteString("\n\n---\n")
	switch {
	case hasTools && len(children) == 0:
		b.WriteString("[This section is summarized. To view full content and access additional tools, call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\".]")
	case hasTools:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to view full content including subsections: ")
		writeJoined(b, children)
		b.WriteString(". Additional tools may become available.]")
	case len(children) == 0:
		b.WriteString("[This section is summarized. To view full content, call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\". The content will be written to context/")
		b.WriteString(path)
		b.WriteString(".md for you to read.]")
	default:
		b.WriteString("[This section is summarized. Call `open_sections` with key \"")
		b.WriteString(path)
		b.WriteString("\" to write content (including subsections: ")
		writeJoined(b, children)
		b.WriteString(") to context/")
		b.WriteString(path)
		b.WriteString(".md.]")
	}
}

func writeJoined(b *strings.Builder, items []string) {
	for i, s := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
}

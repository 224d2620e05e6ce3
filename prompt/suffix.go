package prompt

import "strings"

// suffix returns the line that follows a summary, telling the model how to
// open the section at path. children are the keys of its enabled direct
// children.
func suffix(path string, children []string, hasTools bool) string {
	const head = "\n\n---\n"
	c := strings.Join(children, ", ")
	switch {
	case hasTools && len(children) == 0:
		return head + "[This section is summarized. To view full content and access additional tools, call `open_sections` with key \"" + path + "\".]"
	case hasTools:
		return head + "[This section is summarized. Call `open_sections` with key \"" + path + "\" to view full content including subsections: " + c + ". Additional tools may become available.]"
	case len(children) == 0:
		return head + "[This section is summarized. To view full content, call `open_sections` with key \"" + path + "\". The content will be written to context/" + path + ".md for you to read.]"
	default:
		return head + "[This section is summarized. Call `open_sections` with key \"" + path + "\" to write content (including subsections: " + c + ") to context/" + path + ".md.]"
	}
}

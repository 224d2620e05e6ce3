package section

import "strings"

// Literal returns a template that renders as text, whatever the params:
// for text from elsewhere (a file, a user, a server) that goes where a
// section takes a template (Body, Summary, Brief) and must show as
// written, braces and all. Each "{{" becomes an action that prints "{{";
// text without one is returned as it is.
func Literal(text string) string {
	return strings.ReplaceAll(text, "{{", `{{"{{"}}`)
}

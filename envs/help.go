package envs

import "strings"

// helpKind says how a command's help shows on the screen. Consecutive short
// entries of the same kind share a block; a blank line separates everything
// else.
type helpKind uint8

const (
	helpLong  helpKind = iota // not used yet: description and example
	helpUsed                  // used: signature - summary
	helpShort                 // no example: always signature - summary
)

// help is a command's help text, rendered once when the environment is built.
type help struct {
	name  string
	long  string // "" when the command has no example
	short string
}

func newHelp(env string, c Command) help {
	h := help{name: c.Name(), short: "  " + strings.TrimSpace(c.Signature) + " - " + c.summary()}
	if strings.TrimSpace(c.Example) == "" {
		return h
	}
	var b strings.Builder
	b.WriteString("  ")
	b.WriteString(strings.TrimSpace(c.Signature))
	for line := range strings.Lines(strings.TrimSpace(c.Description)) {
		writeIndented(&b, "    ", line)
	}
	b.WriteString("\n    Example:\n      ```")
	b.WriteString(env)
	for line := range strings.Lines(strings.Trim(c.Example, "\r\n")) {
		writeIndented(&b, "      ", line)
	}
	b.WriteString("\n      ```")
	h.long = b.String()
	return h
}

// writeIndented writes a newline, then line indented by indent, without
// trailing white space (a blank line stays empty).
func writeIndented(b *strings.Builder, indent, line string) {
	b.WriteByte('\n')
	line = strings.TrimRight(line, " \t\r\n")
	if line != "" {
		b.WriteString(indent)
		b.WriteString(line)
	}
}

// renderHelp writes the screen: state, a blank line, then "Commands:" and
// each command's help in declaration order, long for commands env has not
// used and with an example, short otherwise.
func renderHelp(b *strings.Builder, state, env string, cmds []help, used Usage) {
	state = strings.TrimRight(state, " \t\r\n")
	if state != "" {
		b.WriteString(state)
		b.WriteString("\n\n")
	}
	b.WriteString("Commands:")
	prev := helpLong
	for i, h := range cmds {
		kind := helpShort
		switch {
		case h.long == "":
		case used.Used(env, h.name):
			kind = helpUsed
		default:
			kind = helpLong
		}
		if i > 0 && (kind == helpLong || kind != prev) {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		if kind == helpLong {
			b.WriteString(h.long)
		} else {
			b.WriteString(h.short)
		}
		prev = kind
	}
}

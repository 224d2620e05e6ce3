package envs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Handler runs one command of a [Declarative] environment. args is the
// command text after the command's name: leading spaces and tabs on the
// first line and trailing white space removed, later lines untouched. For
//
//	create notes.md
//	# Notes
//
// args is "notes.md\n# Notes". The returned text is the response output. A
// non-nil error fails the command: the response is "Error: " plus its
// message, after any output also returned. Cancelling ctx must make the
// handler return soon.
type Handler func(ctx context.Context, args string) (string, error)

// Command is one command of a [Declarative] environment, declared as a value.
type Command struct {
	// Signature shows how to call the command: "view <file> /<start>/ /<end>/".
	// Its first word is the command's name. One line.
	Signature string
	// Description says what the command does, shown in full (every line)
	// while the command has not been used. Required.
	Description string
	// Summary is the one-line description shown after the signature once the
	// command has been used (or always, without an example). Empty means the
	// first line of Description without its final period.
	Summary string
	// Example is a raw invocation, without a code fence; the help screen
	// fences it with the environment's name. It may span lines (content
	// after the first line). A command without an example always shows its
	// short help.
	Example string
	// Handler runs the command. Required.
	Handler Handler
}

// Name returns the command's name: the first word of its signature.
func (c Command) Name() string {
	name, _ := splitCommand(c.Signature)
	return name
}

// summary returns the one-line short description.
func (c Command) summary() string {
	if c.Summary != "" {
		return strings.TrimSpace(c.Summary)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(c.Description), "\n")
	first = strings.TrimSpace(first)
	if strings.HasSuffix(first, ".") && !strings.HasSuffix(first, "..") {
		first = first[:len(first)-1]
	}
	return first
}

// validate checks the command, reporting the first problem.
func (c Command) validate() error {
	sig := strings.TrimSpace(c.Signature)
	switch {
	case sig == "":
		return errors.New("empty signature; start it with the command's name")
	case strings.ContainsAny(sig, "\r\n"):
		return fmt.Errorf("signature %q spans lines; keep it to one", sig)
	case strings.TrimSpace(c.Description) == "":
		return fmt.Errorf("command %q has no description; say what it does", c.Name())
	case strings.ContainsAny(strings.TrimSpace(c.Summary), "\r\n"):
		return fmt.Errorf("command %q: summary spans lines; keep it to one", c.Name())
	case c.Handler == nil:
		return fmt.Errorf("command %q has no handler", c.Name())
	}
	for line := range strings.Lines(c.Example) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			return fmt.Errorf("command %q: example line %q would close its code fence", c.Name(), strings.TrimSpace(line))
		}
	}
	return nil
}

// splitCommand returns the first word of text and the rest as a [Handler]
// receives it.
func splitCommand(text string) (name, args string) {
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	i := strings.IndexFunc(text, unicode.IsSpace)
	if i < 0 {
		return text, ""
	}
	args = strings.TrimLeft(text[i:], " \t")
	return text[:i], strings.TrimRightFunc(args, unicode.IsSpace)
}

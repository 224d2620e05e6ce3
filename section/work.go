package section

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"text/template"
)

// The work of the templates a render executes is bounded all together
// (docs/design.md, "Rendering rules"), not per template: a bound per
// execution lets a prompt of many headings, each just under it, run for
// hours. So is the work of each step: a loop of a million steps, each
// quoting 8 MiB, would run for a day.

// MaxTemplateSteps bounds the loop iterations and template calls of all
// the templates that share a [Work]: those of one render.
const MaxTemplateSteps = 1_000_000

// MaxTemplateBytes bounds the bytes the templates that share a [Work]
// move: what the string functions (print, printf, println, html, js,
// urlquery) read and write, and the text the templates write.
const MaxTemplateBytes = 256 << 20

// ErrTooManySteps is the error of templates that made more than
// [MaxTemplateSteps] loop iterations and template calls in one render.
var ErrTooManySteps = errors.New("too many loop iterations and template calls")

// ErrTooMuchText is the error of templates that moved more than
// [MaxTemplateBytes] bytes in one render.
var ErrTooMuchText = errors.New("too much text built by templates")

// maxSteps and maxBytes are MaxTemplateSteps and MaxTemplateBytes,
// lowered by tests.
var (
	maxSteps int64 = MaxTemplateSteps
	maxBytes int64 = MaxTemplateBytes
)

// Work is the template work left to one render: every body, summary and
// brief the render executes takes its loop iterations, template calls and
// bytes from it, and the one that takes it past [MaxTemplateSteps] or
// [MaxTemplateBytes] fails. It is safe to use from many goroutines. A nil
// *Work stands for a Work of its own at each execution.
type Work struct {
	steps atomic.Int64 // steps left
	bytes atomic.Int64 // bytes left
	// to, when set, is the Work charged instead: a template's copy keeps
	// functions bound to a Work of its own, pointed at the execution's
	// for the time it runs (see guarded.execute).
	to *Work
}

// NewWork returns the work one render may do.
func NewWork() *Work {
	w := &Work{}
	w.steps.Store(maxSteps)
	w.bytes.Store(maxBytes)
	return w
}

// orNew returns w, or a new Work when w is nil.
func (w *Work) orNew() *Work {
	if w == nil {
		return NewWork()
	}
	return w
}

// step takes one step.
func (w *Work) step() error {
	if w != nil && w.to != nil {
		w = w.to
	}
	if w != nil && w.steps.Add(-1) < 0 {
		return fmt.Errorf("%w: more than %d in one render, all templates together; loop over fewer items, or give the text in the params", ErrTooManySteps, maxSteps)
	}
	return nil
}

// move takes n bytes.
func (w *Work) move(n int) error {
	if w != nil && w.to != nil {
		w = w.to
	}
	if w != nil && w.bytes.Add(-int64(n)) < 0 {
		return fmt.Errorf("%w: the templates wrote, and their print, printf, println, html, js and urlquery read and made, more than %d bytes in one render, all templates together; build less text in loops, or give it in the params", ErrTooMuchText, maxBytes)
	}
	return nil
}

// The functions a guarded template calls at the start of every range
// body (stepRange) and of every template (stepCall); an execution counts
// their calls. What text/template says of the call is said again in the
// user's terms (see stepError).
const (
	stepRange = "unfold_range"
	stepCall  = "unfold_call"
)

// stepError is a failure of a step, said without the name of the function
// that counts steps.
type stepError struct {
	err error
	msg string
}

func (e *stepError) Error() string { return e.msg }
func (e *stepError) Unwrap() error { return e.err }

// sayStep rewrites text/template's words for a failed step ("at
// <unfold_range>: error calling unfold_range: ") into the user's; other
// errors are returned as they are.
func sayStep(err error) error {
	if err == nil || !errors.Is(err, ErrTooManySteps) {
		return err
	}
	msg := err.Error()
	for name, say := range map[string]string{stepRange: "at {{range}}: ", stepCall: "at the start of the template: "} {
		msg = strings.Replace(msg, "at <"+name+">: error calling "+name+": ", say, 1)
	}
	return &stepError{err: err, msg: msg}
}

// workFuncs returns the functions an execution charging w calls: the
// string builtins, bounded (see sprint), the comparisons (see eq), and the
// step counters.
func workFuncs(w *Work) template.FuncMap {
	return template.FuncMap{
		"print":    func(args ...any) (string, error) { return w.sprint("print", args, false) },
		"println":  func(args ...any) (string, error) { return w.sprint("println", args, true) },
		"printf":   w.printf,
		"html":     func(args ...any) (string, error) { return w.escape("html", args, htmlSize, template.HTMLEscapeString) },
		"js":       func(args ...any) (string, error) { return w.escape("js", args, jsSize, template.JSEscapeString) },
		"urlquery": func(args ...any) (string, error) { return w.escape("urlquery", args, urlquerySize, queryEscape) },
		"eq":       w.eq,
		"ne":       w.ne,
		"lt":       w.lt,
		"le":       w.le,
		"gt":       w.gt,
		"ge":       w.ge,
		stepRange:  func() (string, error) { return "", w.step() },
		stepCall:   func() (string, error) { return "", w.step() },
	}
}

// boundedFuncs are the functions templates are parsed with: workFuncs
// charging no Work, which each execution that calls them replaces.
var boundedFuncs = workFuncs(nil)

// Package promptfile reads prompts written as markdown files.
//
// Headings make sections, nested by level: the shallowest heading level in
// the file is the top. Attributes in braces after a heading set the rest:
//
//	## Reference {#reference visibility=summary summary="API docs on request." priority=2}
//
// The key defaults to a slug of the title ("Code Style" -> "code-style").
// The attributes are key (or #id), visibility (full or summary), summary,
// priority (an integer) and title, each at most once (#id and key= are
// one); any other is an error. Braces that end a title as its text are
// escaped (# Sets \{a, b\}); empty ones ({}) set nothing and stay text.
// In a code span a backslash stays as written (# Use `\{` in code).
// A title is text, never a template. A section's body
// is the text up to the next heading, a Go template over the params given
// as JSON ({{.name}}); so is its summary. Every {{ starts a template
// action, in code too: a literal one is written {{"{{"}}. Errors name the
// file, the line and the heading.
//
// [File.Check] runs every template of the file with the params, those of
// summarized sections too, so that a param the file misses is named before
// the prompt is used rather than when the model opens a section;
// [File.Bind] checks first.
package promptfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/unfold-dev/unfold/internal/jsonpos"
	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/visibility"
)

// Params are the values a prompt file's templates see: a JSON object.
type Params = map[string]any

// File is a parsed prompt file; [File.Template] is its prompt template.
type File struct {
	name     string
	template *prompt.Template
	lines    map[string]int              // section path -> line of its heading
	body     map[string]int              // section path -> line its body starts on
	text     map[string]int              // section path -> line of its body's first text, past blank lines
	literal  map[string]int              // section path -> lines of its body's text before its first template action
	titles   map[string]string           // section path -> its heading's title
	sections map[string]*section.Section // section path -> its section
}

// MaxSize is the largest prompt file Parse accepts, in bytes.
const MaxSize = 8 << 20

// md parses prompt files, made when first needed.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithParserOptions(parser.WithAttribute()))
})

// Load reads and parses the prompt file at path. It reads regular files
// only, of at most [MaxSize] bytes: a named pipe, a socket or a device is
// refused with an error saying what it is.
func Load(path string) (*File, error) {
	src, err := readfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("promptfile: %w", err)
	}
	return Parse(path, src)
}

// Error is a problem in a prompt file, at a line and a heading.
type Error struct {
	File    string
	Line    int    // 1-based; 0 when the problem has no line
	Heading string // the heading's title, when the problem is in a section
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Heading != "" {
		fmt.Fprintf(&b, ": heading %q", e.Heading)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// node is a heading with its section spec, before the section is built.
type node struct {
	level    int
	line     int // of the heading
	body     int // the line the body starts on
	spec     section.Spec[Params]
	children []*node
}

// Parse parses a prompt file's contents; name is used in errors and, as a
// slug, as the template's key.
func Parse(name string, src []byte) (*File, error) {
	if len(src) > MaxSize {
		return nil, &Error{File: name, Err: fmt.Errorf("%d bytes is over the %d-byte limit", len(src), MaxSize)}
	}
	// A byte order mark, as some editors write, is not text before the
	// first heading.
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	doc := md().Parser().Parse(text.NewReader(src))
	var (
		errs  []error
		roots []*node
		stack []*node
		prev  *node
		prevE int // where the previous heading's block ends
		lines = lineCounter{src: src}
	)
	fail := func(line int, heading string, format string, args ...any) {
		errs = append(errs, &Error{File: name, Line: line, Heading: heading, Err: fmt.Errorf(format, args...)})
	}
	flushBody := func(end int) {
		if prev != nil {
			prev.spec.Body = string(src[prevE:end])
		} else if strings.TrimSpace(string(src[:end])) != "" {
			fail(1, "", "text before the first heading; put it under a heading")
		}
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			continue
		}
		start, end := headingExtent(src, h)
		flushBody(start)
		nd := &node{level: h.Level, line: lines.at(start), body: lines.at(end)}
		title := headingTitle(src, h)
		switch {
		case !strings.HasSuffix(title, "}") || !bracesUnescaped(title) || strings.HasSuffix(title, "{}"):
			// No braces, braces escaped as text (\{a, b\}), or empty
			// ones, which set nothing ("main() {} {#main}").
		case strings.Contains(title, "{{"):
			fail(nd.line, title, "a title is text, not a template: put {{...}} in the body, or write the braces as text with a backslash: \\{\\{")
		default:
			fail(nd.line, title, "the attributes in braces could not be read; write them as {#key name=value name=\"quoted value\"}, or write braces that end the title as text with a backslash: \\{")
		}
		if attrs, ok := trailingAttributes(src, h); ok && len(attrs) == 0 {
			// Empty braces set nothing: they are the title's text,
			// as in "func main() {}".
			title = headingTitle(src, h, true)
		}
		title = unescapeBraces(title)
		nd.spec.Title = title
		if err := applyAttributes(src, &nd.spec, h); err != nil {
			fail(nd.line, title, "%v", err)
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= nd.level {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, nd)
		} else {
			parent := stack[len(stack)-1]
			parent.children = append(parent.children, nd)
		}
		stack = append(stack, nd)
		prev, prevE = nd, end
	}
	flushBody(len(src))
	if len(roots) == 0 && len(errs) == 0 {
		fail(0, "", "no headings: a prompt file needs at least one heading, one per section")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := duplicates(name, roots); err != nil {
		return nil, err
	}
	f := &File{name: name, lines: map[string]int{}, body: map[string]int{}, text: map[string]int{}, literal: map[string]int{}, titles: map[string]string{}, sections: map[string]*section.Section{}}
	sections := f.build(roots, "")
	if err := section.Validate(sections, prompt.OpenSectionsName); err != nil {
		return nil, f.locate(err)
	}
	key := slug(strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)))
	if key == "" {
		key = "prompt"
	}
	t, err := prompt.New("file", key, sections...)
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	f.template = t
	return f, nil
}

// duplicates reports sibling headings with the same key, at the line of the
// later one, before sections are built.
func duplicates(name string, nodes []*node) error {
	var errs []error
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.spec.Key] {
			errs = append(errs, &Error{File: name, Line: n.line, Heading: n.spec.Title,
				Err: fmt.Errorf("duplicate key %q among sibling headings; give one an id: {#other-key}", n.spec.Key)})
		}
		seen[n.spec.Key] = true
		if err := duplicates(name, n.children); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// build turns parsed headings into sections, recording each path's line
// and title.
func (f *File) build(nodes []*node, prefix string) []*section.Section {
	out := make([]*section.Section, len(nodes))
	for i, n := range nodes {
		path := n.spec.Key
		if prefix != "" {
			path = prefix + "." + path
		}
		f.lines[path], f.body[path], f.titles[path] = n.line, n.body, n.spec.Title
		f.text[path] = n.body + blankLines(n.spec.Body)
		f.literal[path] = literalLines(n.spec.Body)
		n.spec.Children = f.build(n.children, path)
		out[i] = section.New(n.spec)
		f.sections[path] = out[i]
	}
	return out
}

// Locate rewrites the section errors in err (from building or rendering
// the file's prompt) to name the file, the line and the heading.
func (f *File) Locate(err error) error {
	if err == nil {
		return nil
	}
	return f.locate(err)
}

// locate rewrites section errors to point at the file's lines.
func (f *File) locate(err error) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *Error
		if errors.As(e, &fe) {
			out = append(out, e) // located already
			continue
		}
		var se *section.Error
		if errors.As(e, &se) {
			line, err := f.lines[se.Path], se.Err
			if errors.Is(err, section.ErrNoSummary) {
				// The words are the library's; say which attribute to write.
				err = &atLine{err: err, msg: err.Error() + ` Add summary="..." to the heading's attributes: what the model sees until it opens the section.`}
			} else if m := bodyAt().FindStringSubmatch(err.Error()); m != nil {
				// text/template counts lines from the body's start.
				n, _ := strconv.Atoi(m[1])
				line = f.body[se.Path] + n - 1
				msg := "body template: "
				if m[2] != "" {
					msg += "column " + m[2] + ": "
				}
				// A parse error (no column) may say where its action
				// started, on the template's line too: the error is
				// there (an unclosed action is at the end otherwise).
				msg += startedAt().ReplaceAllStringFunc(m[3], func(s string) string {
					n, _ := strconv.Atoi(startedAt().FindStringSubmatch(s)[1])
					line = f.body[se.Path] + n - 1
					return fmt.Sprintf("started at line %d", line)
				})
				switch {
				case strings.Contains(m[3], "map has no entry for key"):
					msg += "; give it in the params"
				case m[2] == "" && fromLiteral(m[3]):
					msg += `; text written {{ as is starts a template action: write {{"{{"}} for a literal {{`
				}
				err = &atLine{err: err, msg: msg}
			} else if m := fenceAt().FindStringSubmatchIndex(err.Error()); m != nil {
				// The line is counted from the body's first text. The
				// rendered body's lines are the template's up to the
				// line of its first action, which may write lines of
				// its own or none: a fence past that line keeps the
				// rendered body's line.
				text := err.Error()
				if n, _ := strconv.Atoi(text[m[2]:m[3]]); !strings.HasSuffix(text[:m[0]], "rendered body ") || n <= f.literal[se.Path]+1 {
					line = f.text[se.Path] + n - 1
					err = &atLine{err: err, msg: text[:m[0]] + "opens a code fence on this line" + text[m[1]:]}
				}
			}
			out = append(out, &Error{File: f.name, Line: line, Heading: f.titles[se.Path], Err: err})
			continue
		}
		out = append(out, &Error{File: f.name, Err: e})
	}
	return errors.Join(out...)
}

// fromLiteral reports whether a body template's parse error is one that
// text written {{ as is can cause, where a {{ meant as a literal starts
// an action: the lexer's errors, and a command or operand that is not
// one. An error about an action's structure ({{if}} without {{end}}, a
// stray {{end}}, an undefined variable) comes from an action meant as
// one, and escaping would not mend it.
func fromLiteral(msg string) bool {
	for _, p := range []string{
		"bad character", "bad number syntax", "comment ends before closing delimiter",
		"expected :=", "malformed character constant", "missing value for command",
		"unclosed", "unexpected right paren", "unrecognized character", "unterminated",
	} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return strings.HasPrefix(msg, "unexpected ") &&
		(strings.HasSuffix(msg, " in command") || strings.HasSuffix(msg, " in operand"))
}

// bodyAt finds where in a body text/template says an error is:
// "body template: template: NAME:LINE:COLUMN: the rest" when running it,
// "body template: template: NAME:LINE: the rest" when parsing it.
// Compiled when first needed, not at start (see docs/design.md, "Front
// ends").
var bodyAt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^body template: template: [^:]*:(\d+):(?:(\d+):)? (?s:(.*))$`)
})

// startedAt finds the line a parse error says an action started on:
// "unclosed action started at NAME:LINE".
var startedAt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`started at [^:\s]*:(\d+)`)
})

// fenceAt finds the line a body's code fence left open is on, counted
// from the body's first text: "opens a code fence on line N".
var fenceAt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`opens a code fence on line (\d+)`)
})

// blankLines returns how many blank lines body starts with, which the
// lines of its errors do not count (a body is dedented first).
func blankLines(body string) int {
	n := 0
	for line := range strings.Lines(body) {
		if strings.TrimSpace(line) != "" || !strings.HasSuffix(line, "\n") {
			break
		}
		n++
	}
	return n
}

// literalLines counts the lines of body's text, past its blank lines,
// before the line of its first template action: the lines a rendered
// body has as written.
func literalLines(body string) int {
	skip, n := blankLines(body), 0
	for line := range strings.Lines(body) {
		if skip > 0 {
			skip--
			continue
		}
		if strings.Contains(line, "{{") {
			break
		}
		n++
	}
	return n
}

// atLine is an error with its message told another way (the line it gives
// moved to the file's), unwrapping to the error.
type atLine struct {
	err error
	msg string
}

func (e *atLine) Error() string { return e.msg }
func (e *atLine) Unwrap() error { return e.err }

// Template returns the file's prompt template.
func (f *File) Template() *prompt.Template { return f.template }

// Line returns the line of the heading of the section at path, 0 if none.
func (f *File) Line(path string) int { return f.lines[path] }

// Bind binds params (nil for none) to the file's template, after
// [File.Check] has found every template of the file to work with them.
func (f *File) Bind(params Params) (*prompt.Prompt, error) {
	if params == nil {
		params = Params{}
	}
	if err := f.Check(params); err != nil {
		return nil, err
	}
	return f.template.Bind(params)
}

// Check executes every template of the file with params (nil for none):
// each section's body, as if every section were open, and each summary.
// A body under a summarized section runs only when the model opens it,
// so a param it misses would otherwise show only then, as a failed tool
// call the model cannot mend; Check names it before anything starts, at
// the file's line and heading.
//
// Each template runs on its own, with the template work one render
// gives ([section.MaxTemplateSteps], [section.MaxTemplateBytes]): opening
// a section runs its body alone, the others' being kept from earlier
// renders, so a limit Check reports is one the section reaches by
// itself. Check thus does at most that work per template, for at most
// two templates per heading, and stops after 20 errors.
func (f *File) Check(params Params) error {
	if params == nil {
		params = Params{}
	}
	if _, err := f.template.Bind(params); err != nil {
		return f.locate(err)
	}
	paths := slices.SortedFunc(maps.Keys(f.sections), func(a, b string) int { return f.lines[a] - f.lines[b] })
	var errs []error
	for _, path := range paths {
		if len(errs) >= maxCheckErrors {
			errs = append(errs, fmt.Errorf("check stopped after %d errors; mend these and run again to see the rest", maxCheckErrors))
			break
		}
		s := f.sections[path]
		if err := checkBody(s, params); err != nil {
			errs = append(errs, &section.Error{Path: path, Err: err})
		}
		if _, err := s.SummaryFor(params); err != nil {
			errs = append(errs, &section.Error{Path: path, Err: err})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return f.locate(errors.Join(errs...))
}

// maxCheckErrors is the most errors [File.Check] reports: a param missing
// from every one of a long file's sections would make one per heading.
const maxCheckErrors = 20

// checkBody executes the body of s with params, in template work of its
// own, and looks at what it wrote as a render does (the prompt package's
// execBody): a code fence it opens must close.
func checkBody(s *section.Section, params Params) error {
	raw, err := s.Body(params)
	if err != nil {
		return err
	}
	if line := markdown.OpenFence(markdown.Dedent(raw)); line > 0 {
		return fmt.Errorf("rendered body opens a code fence on line %d and never closes it", line)
	}
	return nil
}

// DecodeParams decodes a JSON object of params; anything else is an error
// saying what was found. Numbers become int64 when they are written as
// integers (7) and fit, float64 otherwise (7.0, 7e0, 3.5), so that templates compare (eq .n 7) and format
// (printf "%.2f" .price) them as numbers.
func DecodeParams(data []byte) (Params, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("promptfile: params: not JSON: %s", jsonpos.Describe(data, err, "the text ends before the JSON object does"))
	}
	if dec.More() {
		return nil, errors.New("promptfile: params: more than one JSON value; want one object")
	}
	// More says no to a stray ] or }, which would hide what follows it.
	if rest := data[dec.InputOffset():]; len(bytes.TrimSpace(rest)) > 0 {
		at := len(data) - len(bytes.TrimLeft(rest, " \t\r\n"))
		line := 1 + bytes.Count(data[:at], []byte("\n"))
		return nil, fmt.Errorf("promptfile: params: line %d: %q after the object; want one JSON object and nothing after it", line, utf8cut.Prefix(string(data[at:]), 16))
	}
	p, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("promptfile: params: want a JSON object, got %s", jsonKind(v))
	}
	if err := checkDuplicates(data); err != nil {
		return nil, err
	}
	if _, err := numbers(p, &jsonPath{}); err != nil {
		return nil, err
	}
	return p, nil
}

// jsonPath is where a value sits in the params, from the top: a key of an
// object, or an index of an array, per level. Decoding keeps one, adding a
// step on the way down and taking it off on the way up, and writes it out
// only for an error: writing it for every value took time in proportion
// to the values times the path's length (hours for a 4 MB key over an
// array).
type jsonPath []pathStep

// pathStep is a level of a jsonPath: key, or index when key is "" and
// index is not -1.
type pathStep struct {
	key   string
	index int
}

func (p *jsonPath) push(key string, index int) { *p = append(*p, pathStep{key, index}) }
func (p *jsonPath) pop()                       { *p = (*p)[:len(*p)-1] }

// String writes the path as a template reads it: a.b[2].c.
func (p jsonPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.index >= 0:
			fmt.Fprintf(&b, "[%d]", s.index)
		case b.Len() > 0:
			b.WriteString(".")
			fallthrough
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// numbers returns v, a value decoded with UseNumber, with its numbers
// turned into what templates compare and format as numbers: an int64 when
// it is written as an integer (7) and fits, a float64 otherwise (7.0, 7e0). A number out of
// float64's range is refused with its path.
func numbers(v any, path *jsonPath) (any, error) {
	switch v := v.(type) {
	case json.Number:
		// As written: 7 is an integer, 7.0 and 7e0 are not.
		if !strings.ContainsAny(string(v), ".eE") {
			if i, err := v.Int64(); err == nil {
				return i, nil
			}
		}
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("promptfile: params: %s: the number %s is out of range; give it as a string if the text is what is wanted", path, v)
		}
		return f, nil
	case map[string]any:
		for k, e := range v {
			path.push(k, -1)
			c, err := numbers(e, path)
			if err != nil {
				return nil, err
			}
			path.pop()
			v[k] = c
		}
	case []any:
		for i, e := range v {
			path.push("", i)
			c, err := numbers(e, path)
			if err != nil {
				return nil, err
			}
			path.pop()
			v[i] = c
		}
	}
	return v, nil
}

// checkDuplicates refuses a key given twice in one object of data, a JSON
// value already decoded: encoding/json keeps the last one silently.
func checkDuplicates(data []byte) error {
	return checkValue(json.NewDecoder(bytes.NewReader(data)), data, &jsonPath{})
}

// checkValue reads the next value of dec, named path, refusing a key given
// twice in any object in it.
func checkValue(dec *json.Decoder, data []byte, path *jsonPath) error {
	tok, err := dec.Token()
	if err != nil {
		return nil // decoding refused what is not JSON already
	}
	switch tok {
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			path.push("", i)
			if err := checkValue(dec, data, path); err != nil {
				return err
			}
			path.pop()
		}
	case json.Delim('{'):
		keys := map[string]bool{}
		for dec.More() {
			at := dec.InputOffset()
			tok, err := dec.Token()
			if err != nil {
				return nil
			}
			key, _ := tok.(string)
			path.push(key, -1)
			if keys[key] {
				if i := bytes.IndexByte(data[at:], '"'); i >= 0 {
					at += int64(i) // the key itself, past a comma and spaces
				}
				line := 1 + bytes.Count(data[:at], []byte("\n"))
				return fmt.Errorf("promptfile: params: line %d: key %q given twice; give each key once", line, path)
			}
			keys[key] = true
			if err := checkValue(dec, data, path); err != nil {
				return err
			}
			path.pop()
		}
	default:
		return nil
	}
	dec.Token() // the closing delimiter
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// repeated refuses an attribute given twice in the heading's braces: the
// parser keeps the last, which would win without a word. #id and key=
// are the same attribute.
func repeated(src []byte, h *ast.Heading) error {
	attrs, ok := trailingAttributes(src, h)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	for _, a := range attrs {
		name := string(a.Name)
		if name == "id" {
			name = "key"
		}
		switch {
		case seen[name] && name == "key":
			return errors.New("the key is given twice (by #id or key=); give it once")
		case seen[name]:
			return fmt.Errorf("attribute %s given twice; give it once", name)
		}
		seen[name] = true
	}
	return nil
}

func applyAttributes(src []byte, spec *section.Spec[Params], h *ast.Heading) error {
	spec.Key = slug(spec.Title)
	if err := repeated(src, h); err != nil {
		return err
	}
	for _, a := range h.Attributes() {
		name := string(a.Name)
		switch name {
		case "id", "key":
			s, ok := a.Value.([]byte)
			if !ok {
				return fmt.Errorf("attribute %s must be text", name)
			}
			spec.Key = string(s)
		case "title":
			s, ok := a.Value.([]byte)
			if !ok {
				return errors.New("attribute title must be text")
			}
			spec.Title = string(s)
		case "summary":
			s, ok := a.Value.([]byte)
			if !ok {
				return errors.New("attribute summary must be text; quote it: summary=\"...\"")
			}
			spec.Summary = string(s)
		case "visibility":
			s, _ := a.Value.([]byte)
			m, err := visibility.ParseMode(string(s))
			if err != nil {
				return fmt.Errorf("attribute visibility=%v: want full or summary", attrText(a.Value))
			}
			spec.Visibility = visibility.Const(m)
		case "priority":
			f, ok := a.Value.(float64)
			if _, quoted := a.Value.([]byte); quoted {
				return fmt.Errorf("attribute priority=\"%s\": a quoted value is text; write the integer without quotes: priority=%s", attrText(a.Value), attrText(a.Value))
			}
			if !ok || f != math.Trunc(f) || math.Abs(f) > 1e9 {
				return fmt.Errorf("attribute priority=%v: want an integer", attrText(a.Value))
			}
			spec.Priority = int(f)
		default:
			return fmt.Errorf("unknown attribute %q: want key (or #id), title, visibility, summary or priority", name)
		}
	}
	if spec.Key == "" {
		return fmt.Errorf("the title %q gives no key (keys are made of its ASCII letters and digits); give one: {#key}", spec.Title)
	}
	return nil
}

func attrText(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// headingTitle returns the heading's text without its attributes, or
// with what follows its last line when whole is true.
func headingTitle(src []byte, h *ast.Heading, whole ...bool) string {
	var parts []string
	lines := h.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		if i == lines.Len()-1 && len(whole) > 0 && whole[0] {
			seg.Stop = lineEnd(src, seg.Stop)
		}
		parts = append(parts, strings.TrimSpace(string(seg.Value(src))))
	}
	return strings.Join(parts, " ")
}

// trailingAttributes reads the attributes in braces that follow the
// heading's last line, which the parser cut before them, as they are
// written: the parser's own list keeps one of each name. ok is false
// when there are none.
func trailingAttributes(src []byte, h *ast.Heading) (parser.Attributes, bool) {
	lines := h.Lines()
	if lines.Len() == 0 {
		return nil, false
	}
	stop := lines.At(lines.Len() - 1).Stop
	return parser.ParseAttributes(text.NewReader(src[stop:lineEnd(src, stop)]))
}

// unescapeBraces turns the braces escaped in title, \{ and \}, into the
// braces themselves, outside code spans: inside one, markdown keeps a
// backslash as written ("Use `\{` in code"). A span is a run of
// backticks up to the next run of as many (CommonMark 6.1); a backtick
// after a backslash starts none. The runs are listed by length first, so
// that finding where each span ends takes a search, not a scan of the
// rest of the title.
func unescapeBraces(title string) string {
	runs := map[int][]int{} // length -> where the runs of backticks that long start
	for i := 0; i < len(title); i++ {
		if title[i] == '`' {
			n := backticks(title[i:])
			runs[n] = append(runs[n], i)
			i += n - 1
		}
	}
	var b strings.Builder
	for i := 0; i < len(title); {
		switch c := title[i]; {
		case c == '\\' && i+1 < len(title) && (title[i+1] == '{' || title[i+1] == '}'):
			b.WriteByte(title[i+1])
			i += 2
		case c == '\\' && i+1 < len(title) && title[i+1] == '`':
			b.WriteString("\\`")
			i += 2
		case c == '`':
			n := backticks(title[i:])
			end := i + n // with no run as long to close them, the backticks are text
			if starts := runs[n]; len(starts) > 0 {
				if k, _ := slices.BinarySearch(starts, i+n); k < len(starts) {
					end = starts[k] + n
				}
			}
			b.WriteString(title[i:end])
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// backticks returns how many backticks s starts with.
func backticks(s string) int {
	return len(s) - len(strings.TrimLeft(s, "`"))
}

// bracesUnescaped reports whether title has a { that is not escaped.
func bracesUnescaped(title string) bool {
	return strings.Contains(strings.ReplaceAll(title, `\{`, ""), "{")
}

// headingExtent returns where the heading's block starts (its first line)
// and ends (after its last line, the underline of a setext heading
// included).
func headingExtent(src []byte, h *ast.Heading) (start, end int) {
	pos := h.Pos()
	if pos < 0 && h.Lines().Len() > 0 {
		pos = h.Lines().At(0).Start
	}
	pos = max(pos, 0)
	start = pos
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	end = lineEnd(src, pos)
	if h.Lines().Len() > 0 && h.Lines().At(0).Start <= pos {
		// Setext: the content lines, then the underline.
		last := h.Lines().At(h.Lines().Len() - 1)
		end = lineEnd(src, lineEnd(src, max(last.Stop-1, 0))+1)
	}
	if end < len(src) {
		end++ // the newline
	}
	return start, end
}

func lineEnd(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return min(i, len(src))
}

// lineCounter gives the line of offsets in src, counting on from the
// last one asked for: headings come in order, so a file is counted once,
// not once per heading.
type lineCounter struct {
	src       []byte
	off, line int
}

// at returns the line, from 1, of offset in src.
func (c *lineCounter) at(offset int) int {
	offset = min(offset, len(c.src))
	if offset < c.off {
		c.off, c.line = 0, 0
	}
	c.line += bytes.Count(c.src[c.off:offset], []byte("\n"))
	c.off = offset
	return c.line + 1
}

// slug lower-cases s and joins its words with '-', keeping letters, digits
// and '_', at most 64 bytes: "Code Style!" -> "code-style".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	out := b.String()
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "-")
	}
	return out
}

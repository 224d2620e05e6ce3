package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxFrontMatterBytes bounds the front matter read from a SKILL.md: far
// more than a name, a 1,024-character description and the optional fields
// need.
const MaxFrontMatterBytes = 64 << 10

// The limits of the format, in characters.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
)

// delimiter opens and closes the front matter.
const delimiter = "---"

// frontMatterBuffer is how much of a SKILL.md the first read takes: the
// front matter of most skills, and little of the instructions.
const frontMatterBuffer = 1024

// errNoFrontMatter and errUnclosed are the front matter's own problems.
var (
	errNoFrontMatter = errors.New("SKILL.md must start with YAML front matter: a line \"---\", the fields, and a closing \"---\"")
	errUnclosed      = errors.New("the front matter is never closed: end it with a line \"---\" before the instructions")
	errTooLarge      = fmt.Errorf("the front matter is not closed within %d KiB: end it with a line \"---\" after the fields", MaxFrontMatterBytes>>10)
	errCROnly        = errors.New("SKILL.md's lines end with a carriage return alone (CR, as on classic Mac OS), which YAML front matter does not allow: save the file with LF line endings")
)

// readFrontMatter reads r up to the line that closes the front matter and
// returns the YAML between the delimiters. It reads into *buf, which it
// grows as needed and which the YAML is part of. Only the front matter is
// read, with what the last read takes past it: the first read takes
// frontMatterBuffer bytes, each next one as many as were read before. The
// instructions wait until the skill is opened.
func readFrontMatter(r io.Reader, buf *[]byte) ([]byte, error) {
	data := (*buf)[:0]
	defer func() { *buf = data[:0] }()
	opened := false // the opening line was seen
	start := 0      // where the YAML starts, once opened
	line := 0       // where the next line to look at starts
	eof := false
	for {
	scan:
		for line < len(data) {
			if !opened && crOnly(data) {
				return nil, errCROnly
			}
			end := bytes.IndexByte(data[line:], '\n')
			next := line + end + 1
			switch {
			case end >= 0:
				end += line
			case !eof:
				break scan // the line goes on past what was read
			default:
				end, next = len(data), len(data) // the last line has no newline
			}
			if next > MaxFrontMatterBytes {
				return nil, errTooLarge
			}
			text := bytes.TrimRight(data[line:end], " \t\r")
			switch {
			case !opened:
				if string(bytes.TrimPrefix(text, bom)) != delimiter {
					return nil, errNoFrontMatter
				}
				opened, start = true, next
			case string(text) == delimiter:
				return data[start:line], nil
			}
			line = next
		}
		if eof {
			if !opened {
				return nil, errNoFrontMatter
			}
			return nil, errUnclosed
		}
		if len(data) > MaxFrontMatterBytes {
			return nil, errTooLarge
		}
		want := min(max(len(data), frontMatterBuffer), MaxFrontMatterBytes+1-len(data))
		if cap(data)-len(data) < want {
			data = append(make([]byte, 0, len(data)+want), data...)
		}
		n, err := r.Read(data[len(data) : len(data)+want])
		data = data[:len(data)+n]
		switch {
		case errors.Is(err, io.EOF):
			eof = true
		case err != nil:
			return nil, err
		}
	}
}

// crOnly reports whether data, the start of a file, opens a front matter
// with a line ended by a carriage return alone: the whole file is then one
// line.
func crOnly(data []byte) bool {
	rest, ok := bytes.CutPrefix(bytes.TrimPrefix(data, bom), []byte(delimiter))
	rest = bytes.TrimLeft(rest, " \t")
	return ok && len(rest) >= 2 && rest[0] == '\r' && rest[1] != '\n'
}

// bom is the byte order mark that may start a UTF-8 file.
var bom = []byte("\uFEFF")

// splitBody returns what follows the front matter of a whole SKILL.md,
// trimmed; a file without front matter is all body.
func splitBody(data []byte) string {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(bytes.TrimRight(first, " \t\r")) != delimiter {
		return strings.TrimSpace(string(data))
	}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if string(bytes.TrimRight(line, " \t\r")) == delimiter {
			return strings.TrimSpace(string(rest))
		}
	}
	return ""
}

// checkTokens returns the first token of tks that YAML reads otherwise
// than a reader of the front matter would, with the message that says
// so; nil when none does. A document end ("...") with more after it makes
// YAML read nothing past it: the fields there would be neither read nor
// checked. An explicit key ("? name", its value on the next line after
// ":") is no field the format defines by that name.
func checkTokens(tks token.Tokens) (*token.Token, string) {
	for i, tk := range tks {
		switch tk.Type {
		case token.DocumentEndType:
			for _, after := range tks[i+1:] {
				if after.Type != token.CommentType {
					return tk, `the front matter holds a YAML document end "...", which ends what YAML reads: the lines after it would not be read; remove it, and close the front matter with "---" after every field`
				}
			}
		case token.MappingKeyType:
			if i+1 < len(tks) && tks[i+1].Position.Line == tk.Position.Line && tks[i+1].Type != token.MappingValueType {
				key := tks[i+1].Value
				return tk, fmt.Sprintf("the key %q is written as an explicit key (\"? %s\"): write %s: VALUE on one line", key, key, key)
			}
			return tk, `an explicit key ("?") with no key on its line: write each field as NAME: VALUE on one line`
		}
	}
	return nil, ""
}

// fields are the front matter's values as the format defines them.
type fields struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string
}

// known are the fields the format defines, in the order the spec lists
// them.
var known = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// checker collects the problems of one SKILL.md.
type checker struct {
	file     string // as reported
	offset   int    // the file's line number of the YAML's first line, less one
	problems []Problem
}

// missing reports a required field that is not there, on the line that
// opens the front matter.
func (c *checker) missing(rule Rule, format string, args ...any) {
	c.problems = append(c.problems, Problem{File: c.file, Line: 1, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) fail(line int, rule Rule, format string, args ...any) {
	if line > 0 {
		line += c.offset
	}
	c.problems = append(c.problems, Problem{File: c.file, Line: line, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// yamlPosition is a position in the YAML as go-yaml's messages give it:
// "[line:column]". It is compiled on first use.
var yamlPosition = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`at \[(\d+):\d+\]`) })

// fileLines rewrites the positions in a go-yaml message, lines of the
// front matter, as lines of the file.
func (c *checker) fileLines(msg string) string {
	re := yamlPosition()
	return re.ReplaceAllStringFunc(msg, func(m string) string {
		line, err := strconv.Atoi(re.FindStringSubmatch(m)[1])
		if err != nil {
			return m
		}
		return fmt.Sprintf("on line %d of the file", line+c.offset)
	})
}

// parseFields parses the front matter's YAML and checks every field
// against the format. dir is the skill directory's name, which name must
// match. The fields are meaningful only when no problem is reported.
func (c *checker) parseFields(yml []byte, dir string) fields {
	var f fields
	tks := lexer.Tokenize(string(yml))
	if tk, msg := checkShape(tks); tk != nil {
		c.fail(tk.Position.Line, RuleFrontMatter, "%s", msg)
		return f
	}
	if tk, msg := checkTokens(tks); tk != nil {
		c.fail(tk.Position.Line, RuleFrontMatter, "%s", msg)
		return f
	}
	file, err := parser.Parse(tks, 0)
	if err != nil {
		line, msg := 1, err.Error()
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				line = tk.Position.Line
			}
		}
		if strings.Contains(msg, "character '\t'") {
			msg += ": indent with spaces, not tabs"
		}
		c.fail(line, RuleYAML, "invalid YAML in the front matter: %s", c.fileLines(msg))
		return f
	}
	var body ast.Node
	if len(file.Docs) > 0 {
		body = file.Docs[0].Body
	}
	var values []*ast.MappingValueNode
	switch b := body.(type) {
	case nil:
	case *ast.MappingNode:
		values = b.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{b}
	default:
		c.fail(lineOf(body), RuleFrontMatter, "the front matter must be a YAML mapping of fields (name: ..., description: ...), not a %s", kindName(body))
		return f
	}
	seen := map[string]*ast.MappingValueNode{}
	for _, v := range values {
		key, _, ok := scalarText(v.Key)
		if !ok || !slices.Contains(known, key) {
			c.fail(lineOf(v.Key), RuleKnownFields, "unknown field %q: the fields are %s", v.Key.String(), strings.Join(known, ", "))
			continue
		}
		seen[key] = v
	}
	c.name(&f, seen, dir)
	c.description(&f, seen)
	if v, ok := seen["license"]; ok {
		n := v.Value
		s, _, isText := scalarText(n)
		if !isText {
			c.fail(lineOf(v.Key), RuleLicense, "license must be a string, such as a license name or the name of a bundled license file, not a %s", kindName(n))
		}
		f.License = strings.TrimSpace(s)
	}
	if v, ok := seen["compatibility"]; ok {
		n, line := v.Value, lineOf(v.Key)
		s, null, isText := scalarText(n)
		s = strings.TrimSpace(s)
		switch length := utf8.RuneCountInString(s); {
		case !isText:
			c.fail(line, RuleCompatibility, "compatibility must be a string, not a %s", kindName(n))
		case null || length == 0:
			c.fail(line, RuleCompatibility, "compatibility is empty: say what the skill needs (1 to %d characters), or leave the field out", MaxCompatibilityLength)
		case length > MaxCompatibilityLength:
			c.fail(line, RuleCompatibility, "compatibility is %d characters, over the limit of %d", length, MaxCompatibilityLength)
		}
		f.Compatibility = s
	}
	if v, ok := seen["metadata"]; ok {
		f.Metadata = c.metadata(v)
	}
	if v, ok := seen["allowed-tools"]; ok {
		f.AllowedTools = c.allowedTools(v)
	}
	return f
}

func (c *checker) name(f *fields, seen map[string]*ast.MappingValueNode, dir string) {
	v, ok := seen["name"]
	if !ok {
		c.missing(RuleNameRequired, "the required field name is missing: add name: %s", suggestName(dir))
		return
	}
	line := lineOf(v.Key)
	s, null, isText := scalarText(v.Value)
	s = strings.TrimSpace(s)
	if !isText || null || s == "" {
		c.fail(line, RuleNameRequired, "name must be a non-empty string: the skill directory's name, %s", suggestName(dir))
		return
	}
	f.Name = s
	if length := utf8.RuneCountInString(s); length > MaxNameLength {
		c.fail(line, RuleNameLength, "name %q is %d characters, over the limit of %d", s, length, MaxNameLength)
	}
	if !nameCharacters(s) {
		msg := "name %q may hold only lowercase letters a to z, digits and hyphens"
		if strings.ToLower(s) != s {
			msg = "name %q must be lowercase: only lowercase letters a to z, digits and hyphens"
		}
		c.fail(line, RuleNameCharacters, msg, s)
	}
	switch {
	case strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-"):
		c.fail(line, RuleNameHyphens, "name %q must not start or end with a hyphen", s)
	case strings.Contains(s, "--"):
		c.fail(line, RuleNameHyphens, "name %q must not hold two hyphens in a row", s)
	}
	if dir != "" && s != dir {
		c.fail(line, RuleNameDirectory, "name %q must be the name of the skill's directory, %q: rename one of them", s, dir)
	}
}

func (c *checker) description(f *fields, seen map[string]*ast.MappingValueNode) {
	v, ok := seen["description"]
	if !ok {
		c.missing(RuleDescriptionRequired, "the required field description is missing: say what the skill does and when to use it")
		return
	}
	line := lineOf(v.Key)
	s, null, isText := scalarText(v.Value)
	s = strings.TrimSpace(s)
	if !isText || null || s == "" {
		c.fail(line, RuleDescriptionRequired, "description must be a non-empty string: what the skill does and when to use it")
		return
	}
	if strings.TrimFunc(s, invisible) == "" {
		r, _ := utf8.DecodeRuneInString(s)
		c.fail(line, RuleDescriptionRequired, "description holds only characters that do not show (U+%04X): say what the skill does and when to use it", r)
		return
	}
	if length := utf8.RuneCountInString(s); length > MaxDescriptionLength {
		c.fail(line, RuleDescriptionLength, "description is %d characters, over the limit of %d: move detail into the instructions", length, MaxDescriptionLength)
	}
	if i := strings.IndexFunc(s, notInDescription); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		c.fail(line, RuleDescriptionCharacters, "description holds a control character (U+%04X) at character %d: remove it; a description is text shown in the prompt, on lines ended by newlines only", r, utf8.RuneCountInString(s[:i])+1)
	}
	f.Description = s
}

// notInDescription reports whether r may not be in a description: a
// control character other than a newline or a tab (a carriage return
// ends a line too, ESC starts a terminal sequence, NUL ends a C string),
// a line or paragraph separator, or a character that reorders the text
// shown (U+202E): the description is shown in the prompt and on the
// terminal before the skill is opened.
func notInDescription(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case '\u202A' <= r && r <= '\u202E', '\u2066' <= r && r <= '\u2069':
		return true
	}
	return false
}

// invisible reports whether r shows nothing: white space, a format
// character (U+200B, a zero-width space), a character the Unicode
// standard says to ignore when not supported (U+3164, a Hangul filler), a
// variation selector, or the blank braille pattern.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) || r == '\u2800'
}

func (c *checker) metadata(field *ast.MappingValueNode) map[string]string {
	n := unwrap(field.Value)
	if _, null, _ := scalarText(n); null {
		return nil
	}
	m, ok := n.(*ast.MappingNode)
	var values []*ast.MappingValueNode
	switch {
	case ok:
		values = m.Values
	default:
		if mv, isPair := n.(*ast.MappingValueNode); isPair {
			values = []*ast.MappingValueNode{mv}
			break
		}
		c.fail(lineOf(field.Key), RuleMetadata, "metadata must map string keys to string values (author: example-org), not a %s", kindName(n))
		return nil
	}
	out := make(map[string]string, len(values))
	for _, v := range values {
		key, _, keyOK := scalarText(v.Key)
		value, _, valueOK := scalarText(v.Value)
		if !keyOK || !valueOK {
			c.fail(lineOf(v.Key), RuleMetadata, "metadata %s: values must be strings, not a %s", v.Key.String(), kindName(v.Value))
			continue
		}
		out[key] = value
	}
	return out
}

// allowedTools reads allowed-tools: a string, or a list of strings, as
// the format has it. A number or a boolean is refused, in the list too:
// it is no tool's name unless quoted.
func (c *checker) allowedTools(field *ast.MappingValueNode) []string {
	n := unwrap(field.Value)
	if s, null, ok := scalarText(n); ok {
		switch {
		case null:
			return nil
		case !isString(n):
			c.fail(lineOf(field.Key), RuleAllowedTools, "allowed-tools must be a space-separated string of tools (Bash(git:*) Read), not a %s (%s): quote it if it is a tool's name", kindName(n), s)
			return nil
		}
		return strings.Fields(s)
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		c.fail(lineOf(field.Key), RuleAllowedTools, "allowed-tools must be a space-separated string of tools (Bash(git:*) Read), not a %s", kindName(n))
		return nil
	}
	var out []string
	for _, item := range seq.Values {
		s, null, ok := scalarText(item)
		if !ok || !isString(item) {
			what := "a " + kindName(item)
			switch {
			case null:
				what = "an empty item: remove it"
			case ok:
				what += " (" + s + "): quote it if it is a tool's name"
			}
			c.fail(lineOf(item), RuleAllowedTools, "allowed-tools: each tool must be a string, not %s", what)
			continue
		}
		out = append(out, strings.Fields(s)...)
	}
	return out
}

// isString reports whether n is a string: plain, quoted or a block
// scalar, not a number, a boolean or null.
func isString(n ast.Node) bool {
	switch unwrap(n).(type) {
	case *ast.StringNode, *ast.LiteralNode:
		return true
	}
	return false
}

// nameCharacters reports whether s holds only a to z, 0 to 9 and hyphens:
// a name is also a section key and a directory name.
func nameCharacters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// suggestName is what to write as the name: the directory's, when it is
// one.
func suggestName(dir string) string {
	if dir == "" {
		return "the skill's name"
	}
	return dir
}

// unwrap returns the node a tag or an anchor decorates.
func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		default:
			return n
		}
	}
}

// scalarText returns a scalar's text as written (a number keeps its
// digits: version: 1.0 is "1.0"), whether it is null, and false when n is
// not a scalar. The format's fields are strings, and the reference
// validator reads every scalar as one.
func scalarText(n ast.Node) (text string, null, ok bool) {
	switch s := unwrap(n).(type) {
	case nil:
		return "", true, true
	case *ast.NullNode:
		return "", true, true
	case *ast.StringNode:
		return s.Value, false, true
	case *ast.LiteralNode:
		return s.Value.Value, false, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return s.GetToken().Value, false, true
	}
	return "", false, false
}

// kindName names what a node is, for messages.
func kindName(n ast.Node) string {
	switch unwrap(n).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "mapping"
	case *ast.SequenceNode:
		return "list"
	case *ast.AliasNode:
		return "alias (write the value itself)"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number"
	case *ast.BoolNode:
		return "boolean"
	}
	return "value of another kind"
}

// lineOf returns the 1-based line of n in the YAML, or 1.
func lineOf(n ast.Node) int {
	if n == nil {
		return 1
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line > 0 {
		return tk.Position.Line
	}
	return 1
}

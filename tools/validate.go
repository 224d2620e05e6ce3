package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	schema "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/unfold-dev/unfold/internal/printable"
)

// MaxArgs is the largest argument document, in bytes, that [Tool.Call]
// accepts; larger arguments get a failed result without being parsed.
const MaxArgs = 4 << 20

// invalidPrefix starts the message of every result for arguments that do not
// fit the input schema.
const invalidPrefix = "Invalid arguments: "

// Bounds on what a message for the model may hold, so arguments cannot grow
// it: at most maxProblems problems, each with a path and a text cut short.
const (
	maxProblems   = 3
	maxPathLen    = 200
	maxProblemLen = 300
	maxAllowed    = 12
)

// jsonSpace is the whitespace JSON allows around a value.
const jsonSpace = " \t\r\n"

// parseArgs checks the size of args and decodes them, keeping numbers exact,
// for the validator. Empty args and null become {}. It returns the bytes to
// decode into the input type, or a problem for the model.
func parseArgs(args []byte) (raw []byte, doc any, problem string) {
	if len(args) > MaxArgs {
		return nil, nil, fmt.Sprintf("the arguments are %d bytes, more than the limit of %d bytes; send less data",
			len(args), MaxArgs)
	}
	raw = bytes.Trim(args, jsonSpace)
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}"), map[string]any{}, ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			return nil, nil, fmt.Sprintf("not valid JSON: %s (at byte %d)", syn.Error(), syn.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, nil, "not valid JSON: the input ends in the middle of a value"
		default:
			return nil, nil, "not valid JSON: " + truncate(err.Error(), maxProblemLen)
		}
	}
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], jsonSpace); len(rest) > 0 {
		return nil, nil, fmt.Sprintf("not valid JSON: unexpected data after the arguments object (at byte %d); send exactly one JSON object",
			len(raw)-len(rest))
	}
	return raw, doc, ""
}

// problem is one thing wrong with the arguments: where, and what.
type problem struct {
	path string // JSON pointer without the leading slash, or "(root)"
	text string
	hint string // what to do instead; written once per message however many problems share it
}

// explain turns a validation error into a message that names each field and
// its problem. jsonschema nests its errors; only the leaves say what is wrong,
// so they are listed, in a fixed order, at most maxProblems of them.
func (t *Tool) explain(err error, doc any) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return truncate(err.Error(), maxProblemLen)
	}
	ps := t.problems(ve, doc)
	return formatProblems(ps, len(ps))
}

// problems lists the leaf problems of a validation error, sorted.
func (t *Tool) problems(ve *jsonschema.ValidationError, doc any) []problem {
	var ps []problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			ps = append(ps, t.leafProblems(e, doc)...)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortFunc(ps, compareProblems)
	return slices.Compact(ps)
}

// formatProblems writes the first maxProblems of ps, sorted, and how many of
// the total problems it left out.
func formatProblems(ps []problem, total int) string {
	var b strings.Builder
	var hints []string
	for i, p := range ps {
		if i == maxProblems {
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(truncate(p.path, maxPathLen))
		b.WriteString(": ")
		b.WriteString(truncate(p.text, maxProblemLen))
		if p.hint != "" && !slices.Contains(hints, p.hint) {
			hints = append(hints, p.hint)
			b.WriteString(" (")
			b.WriteString(p.hint)
			b.WriteString(")")
		}
	}
	if shown := min(len(ps), maxProblems); total > shown {
		fmt.Fprintf(&b, "; and %d more", total-shown)
	}
	return b.String()
}

// leafProblems explains one leaf error. A missing or unknown property is
// reported at the property itself, one problem per property, so the message
// names the field; everything else keeps jsonschema's text at the value's
// location.
func (t *Tool) leafProblems(e *jsonschema.ValidationError, doc any) []problem {
	inst := pointerTokens(e.InstanceLocation)
	kw := pointerTokens(e.KeywordLocation)
	generic := []problem{{displayPath(inst), e.Message, ""}}
	if len(kw) == 0 {
		return generic
	}
	sch := schemaAt(t.inputSchema, kw[:len(kw)-1])
	if want, ok := quotedForms[patternOf(sch)]; ok && (kw[len(kw)-1] == "pattern" || kw[len(kw)-1] == "type") {
		// A field with the ",string" option, given something else.
		got, _ := json.Marshal(instanceAt(doc, inst))
		return []problem{{displayPath(inst), fmt.Sprintf("cannot use %s here; send %s", truncate(string(got), 60), want), ""}}
	}
	obj, isObj := instanceAt(doc, inst).(map[string]any)
	if sch == nil || !isObj {
		return generic
	}
	var ps []problem
	switch kw[len(kw)-1] {
	case "required":
		for _, name := range sch.Required {
			if _, ok := obj[name]; !ok {
				ps = append(ps, problem{displayPath(append(inst, name)), "missing required property", ""})
			}
		}
	case "additionalProperties":
		if !closed(sch) {
			return generic
		}
		hint := allowedText(sch)
		for name := range obj {
			if sch.Properties[name] == nil {
				ps = append(ps, problem{displayPath(append(inst, name)), "unknown property", hint})
			}
		}
	}
	if len(ps) == 0 {
		return generic
	}
	return ps
}

// patternOf is s's pattern, "" when s is nil.
func patternOf(s *schema.Schema) string {
	if s == nil {
		return ""
	}
	return s.Pattern
}

// allowedText lists the properties an object takes, to steer the model
// towards the right name.
func allowedText(s *schema.Schema) string {
	if len(s.Properties) == 0 {
		return "this object takes no properties"
	}
	var names []string
	for i, name := range s.PropertyOrder {
		if i == maxAllowed {
			names = append(names, "...")
			break
		}
		names = append(names, name)
	}
	return "allowed: " + strings.Join(names, ", ")
}

// schemaAt finds the subschema of s at the keyword path tokens, or nil.
func schemaAt(s *schema.Schema, tokens []string) *schema.Schema {
	for i := 0; s != nil && i < len(tokens); i++ {
		switch tokens[i] {
		case "properties":
			if i+1 == len(tokens) {
				return nil
			}
			i++
			s = s.Properties[tokens[i]]
		case "items":
			s = s.Items
		case "additionalProperties":
			s = s.AdditionalProperties
		default:
			return nil
		}
	}
	return s
}

// instanceAt finds the value at the pointer tokens in a decoded document, or
// nil.
func instanceAt(doc any, tokens []string) any {
	for _, tok := range tokens {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			doc = v[i]
		default:
			return nil
		}
	}
	return doc
}

// pointerTokens splits a location from jsonschema into raw tokens. jsonschema
// escapes tokens as JSON pointer and then as URL path segments.
func pointerTokens(loc string) []string {
	loc = strings.TrimPrefix(loc, "/")
	if loc == "" {
		return nil
	}
	tokens := strings.Split(loc, "/")
	for i, tok := range tokens {
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tokens[i] = pointerUnescaper.Replace(tok)
	}
	return tokens
}

var (
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
)

// displayPath writes tokens as a JSON pointer without the leading slash, or
// "(root)" for the whole arguments object.
func displayPath(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for i, tok := range tokens {
		if i > 0 {
			b.WriteByte('/')
		}
		pointerEscaper.WriteString(&b, printable.String(tok))
		if b.Len() > maxPathLen {
			break
		}
	}
	return b.String()
}

// decodeProblem explains an error from decoding valid arguments, args, into
// the input type in: a number out of range for its Go type, a field taking
// its value in a string (the ",string" option) given something else, a
// malformed time, or whatever a custom decoder reports.
func decodeProblem(err error, in reflect.Type, args []byte) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := "(root)"
		if te.Field != "" {
			path = strings.ReplaceAll(te.Field, ".", "/")
		}
		text := fmt.Sprintf("cannot use %s here", te.Value)
		if lo, hi, ok := intRange(te.Type); ok {
			if num, isNum := strings.CutPrefix(te.Value, "number "); isNum {
				text = fmt.Sprintf("%s is out of range (%s to %s)", te.Value, lo, hi)
				if inRange(num, lo, hi) {
					// The validator takes 1.0 as an integer; encoding/json does not.
					text = fmt.Sprintf("%s must be written as a plain integer, without a fraction or exponent", te.Value)
				}
			}
		}
		return formatProblems([]problem{{path, text, ""}}, 1)
	}
	if strings.Contains(err.Error(), ",string struct tag") {
		// encoding/json names neither the field nor what it takes.
		var doc any
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if dec.Decode(&doc) == nil {
			if p, ok := quotedProblem(in, doc, nil); ok {
				return formatProblems([]problem{p}, 1)
			}
		}
	}
	return truncate(strings.TrimPrefix(err.Error(), "json: "), maxProblemLen)
}

// quotedProblem finds, in doc decoded from arguments for t, the first value
// of a field with the ",string" option that does not decode, at the JSON
// pointer tokens path, and says what the field takes.
func quotedProblem(t reflect.Type, doc any, path []string) (problem, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, _ := doc.(map[string]any)
		for _, f := range reflect.VisibleFields(t) {
			name, ok := jsonName(f)
			v, present := obj[name]
			if !ok || !present {
				continue
			}
			at := append(slices.Clip(path), name)
			if !quoted(f) {
				if p, ok := quotedProblem(f.Type, v, at); ok {
					return p, true
				}
				continue
			}
			if !decodesQuoted(f.Type, v) {
				got, _ := json.Marshal(v)
				return problem{displayPath(at), fmt.Sprintf("cannot use %s here; send %s", truncate(string(got), 60), quotedForm(f.Type).want), ""}, true
			}
		}
	case reflect.Slice, reflect.Array:
		list, _ := doc.([]any)
		for i, v := range list {
			if p, ok := quotedProblem(t.Elem(), v, append(slices.Clip(path), strconv.Itoa(i))); ok {
				return p, true
			}
		}
	case reflect.Map:
		obj, _ := doc.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if p, ok := quotedProblem(t.Elem(), obj[k], append(slices.Clip(path), k)); ok {
				return p, true
			}
		}
	}
	return problem{}, false
}

// decodesQuoted reports whether v decodes into a field of type t that has
// the ",string" option.
func decodesQuoted(t reflect.Type, v any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	holder := reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `json:"v,string"`}})
	return json.Unmarshal(append(append([]byte(`{"v":`), raw...), '}'), reflect.New(holder).Interface()) == nil
}

// inRange reports whether the JSON number num lies within [lo, hi].
func inRange(num, lo, hi string) bool {
	n, ok := new(big.Rat).SetString(num)
	l, _ := new(big.Rat).SetString(lo)
	h, _ := new(big.Rat).SetString(hi)
	return ok && n.Cmp(l) >= 0 && n.Cmp(h) <= 0
}

// intRange gives the bounds of an integer type, for messages.
func intRange(t reflect.Type) (lo, hi string, ok bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bits := t.Bits
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := bits()
		return strconv.FormatInt(math.MinInt64>>(64-n), 10), strconv.FormatInt(math.MaxInt64>>(64-n), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n := bits()
		return "0", strconv.FormatUint(math.MaxUint64>>(64-n), 10), true
	}
	return "", "", false
}

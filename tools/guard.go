package tools

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"

	schema "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The guard walks the arguments with the inferred schema before jsonschema
// sees them, for two reasons. jsonschema keeps every error it finds, and a
// 4 MiB array of wrong items makes millions of them (hundreds of megabytes);
// and it turns numbers into big.Rat values, so an exponent like 1e999999999
// costs seconds or crashes it. The guard checks the same keywords with the
// same messages in constant memory: when it finds more than floodLimit
// problems, or a number no Go type can hold, the call fails with its report
// and jsonschema is not run. Otherwise jsonschema validates as usual and
// explains the few problems there are.
const (
	floodLimit   = 100
	maxNumberLen = 100 // longest number literal the guard passes on to a typed tool (see maxRawNumberLen)
	maxExponent  = 400 // largest exponent magnitude; float64 ends near 1e308
)

// dateTime is jsonschema's own date-time check, so the guard and the
// validator agree on which strings are times.
var dateTime = sync.OnceValue(func() *jsonschema.Schema { return mustCompileLeaf(`{"type":"string","format":"date-time"}`) })

func mustCompileLeaf(s string) *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	if err := c.AddResource("mem://tools/leaf.json", strings.NewReader(s)); err != nil {
		panic(err)
	}
	return c.MustCompile("mem://tools/leaf.json")
}

// guard is one walk over the arguments. It keeps the count of problems and
// the first few in message order, never the rest.
type guard struct {
	count  int
	top    []problem // at most maxProblems, sorted
	hazard bool      // a number too large for jsonschema to parse safely
	raw    bool      // a raw tool's: numbers are bounded by what they cost to parse (see maxRawExponent)
	path   []string  // tokens of the value being checked
}

// report is the message for the problems found.
func (g *guard) report() string { return formatProblems(g.top, g.count) }

func (g *guard) add(at []string, text, hint string) {
	g.count++
	p := problem{displayPath(at), text, hint}
	i, found := slices.BinarySearchFunc(g.top, p, compareProblems)
	if found || i >= maxProblems {
		return
	}
	g.top = slices.Insert(g.top, i, p)
	if len(g.top) > maxProblems {
		g.top = g.top[:maxProblems]
	}
}

// compareProblems orders problems by path, then text: the order they appear
// in a message.
func compareProblems(a, b problem) int {
	return cmp.Or(comparePaths(a.path, b.path), cmp.Compare(a.text, b.text), cmp.Compare(a.hint, b.hint))
}

// comparePaths orders display paths token by token, array indexes by value,
// so section_keys/2 comes before section_keys/10.
func comparePaths(a, b string) int {
	for a != "" && b != "" {
		var ta, tb string
		ta, a, _ = strings.Cut(a, "/")
		tb, b, _ = strings.Cut(b, "/")
		if c := compareTokens(ta, tb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareTokens(a, b string) int {
	if isIndex(a) && isIndex(b) {
		return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
	}
	return cmp.Compare(a, b)
}

// isIndex reports whether a path token is an array index as jsonschema and
// the guard write them: decimal digits without a leading zero.
func isIndex(tok string) bool {
	if tok == "" || len(tok) > 1 && tok[0] == '0' {
		return false
	}
	for i := range len(tok) {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}

// check walks v with schema s, as jsonschema would for the keywords that
// inference writes.
func (g *guard) check(s *schema.Schema, v any) {
	if s.Type == "" {
		return // {}: anything goes
	}
	got := jsonType(v)
	switch s.Type {
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			g.add(g.path, fmt.Sprintf("expected %s, but got %s", s.Type, got), "")
			return
		}
		maxLen, maxExp := maxNumberLen, maxExponent
		if g.raw {
			maxLen, maxExp = maxRawNumberLen, maxRawExponent // numbers has refused the others
		}
		r, ok := parseNumber(string(n), maxLen, maxExp)
		if !ok {
			g.hazard = true
			g.add(g.path, fmt.Sprintf("number %s is out of range for any number type", truncate(string(n), 40)), "")
			return
		}
		if s.Type == "integer" && !r.IsInt() {
			g.add(g.path, "expected integer, but got number", "")
			return
		}
		if s.Minimum != nil && r.Cmp(new(big.Rat).SetFloat64(*s.Minimum)) < 0 {
			g.add(g.path, fmt.Sprintf("must be >= %v but found %s", *s.Minimum, n), "")
		}
		if s.Maximum != nil && r.Cmp(new(big.Rat).SetFloat64(*s.Maximum)) > 0 {
			g.add(g.path, fmt.Sprintf("must be <= %v but found %s", *s.Maximum, n), "")
		}
		return
	}
	if got != s.Type {
		g.add(g.path, fmt.Sprintf("expected %s, but got %s", s.Type, got), "")
		return
	}
	switch v := v.(type) {
	case string:
		g.checkString(s, v)
	case []any:
		if s.MinItems != nil && len(v) < *s.MinItems {
			g.add(g.path, fmt.Sprintf("minimum %d items required, but found %d items", *s.MinItems, len(v)), "")
		}
		if s.MaxItems != nil && len(v) > *s.MaxItems {
			g.add(g.path, fmt.Sprintf("maximum %d items required, but found %d items", *s.MaxItems, len(v)), "")
		}
		if s.Items != nil {
			for i, item := range v {
				g.path = append(g.path, strconv.Itoa(i))
				g.check(s.Items, item)
				g.path = g.path[:len(g.path)-1]
			}
		}
	case map[string]any:
		g.checkObject(s, v)
	}
}

func (g *guard) checkString(s *schema.Schema, v string) {
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(v)) {
		g.add(g.path, enumText(s.Enum), "")
	}
	if s.Format == "date-time" {
		var ve *jsonschema.ValidationError
		if err := dateTime().Validate(v); errors.As(err, &ve) {
			for len(ve.Causes) > 0 {
				ve = ve.Causes[0]
			}
			g.add(g.path, ve.Message, "")
		}
	}
	if s.ContentEncoding == "base64" {
		if _, err := base64.StdEncoding.DecodeString(v); err != nil {
			g.add(g.path, "value is not base64 encoded", "")
		}
	}
}

func (g *guard) checkObject(s *schema.Schema, v map[string]any) {
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			g.add(append(g.path, name), "missing required property", "")
		}
	}
	for name, pv := range v {
		if p := s.Properties[name]; p != nil {
			g.path = append(g.path, name)
			g.check(p, pv)
			g.path = g.path[:len(g.path)-1]
		}
	}
	switch {
	case s.AdditionalProperties == nil:
	case closed(s):
		hint := ""
		for name := range v {
			if s.Properties[name] == nil {
				if hint == "" {
					hint = allowedText(s)
				}
				g.add(append(g.path, name), "unknown property", hint)
			}
		}
	default:
		for name, pv := range v {
			if s.Properties[name] == nil {
				g.path = append(g.path, name)
				g.check(s.AdditionalProperties, pv)
				g.path = g.path[:len(g.path)-1]
			}
		}
	}
}

// closed reports whether object schema s allows no other properties than
// its own: inference writes "additionalProperties": false as {"not": {}}.
func closed(s *schema.Schema) bool {
	return s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
}

// enumText is jsonschema's message for a value outside an enum.
func enumText(values []any) string {
	if len(values) == 1 {
		return fmt.Sprintf("value must be %#v", values[0])
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%#v", v)
	}
	return "value must be one of " + strings.Join(quoted, ", ")
}

// jsonType names the JSON type of a decoded value as JSON Schema does.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// parseNumber parses a JSON number exactly, refusing literals longer than
// maxLen or with an exponent beyond ±maxExp: for a typed tool (maxNumberLen,
// maxExponent) those no Go number type could hold, which would be slow to
// parse.
func parseNumber(n string, maxLen, maxExp int) (*big.Rat, bool) {
	if len(n) > maxLen {
		return nil, false
	}
	if exp, ok := exponent(n); !ok || exp > maxExp || exp < -maxExp {
		return nil, false
	}
	return new(big.Rat).SetString(n)
}

// exponent reads the exponent of a JSON number, 0 if it has none; false
// when it does not fit an int.
func exponent(n string) (int, bool) {
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return 0, true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
	return exp, err == nil
}

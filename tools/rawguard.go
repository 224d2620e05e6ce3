package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	schema "github.com/google/jsonschema-go/jsonschema"
)

// A raw tool's schema ([NewRaw]) is anything an MCP server sends, so the
// guard cannot walk it as it is. guardSchema keeps of it what the guard
// reads exactly as jsonschema does: a node with a keyword that changes
// what the others mean ($ref, which in older drafts replaces its siblings;
// prefixItems, which items follows; patternProperties, which
// additionalProperties leaves out), or with a type that is not one name,
// is kept as {}, anything goes. Every keyword is a further condition on
// the value, so checking fewer of them reports fewer problems, never one
// that jsonschema would not: the guard stops a flood of wrong items in
// constant memory, and jsonschema explains whatever it lets through.
// Numbers are checked apart, whatever the schema ([guard.numbers]).
func guardSchema(input []byte) *schema.Schema {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber() // bounds as written: see exactBound
	var doc any
	if dec.Decode(&doc) != nil {
		return &schema.Schema{}
	}
	return guardNode(doc, 0)
}

// maxGuardDepth bounds the recursion into a schema: deeper nodes are {}.
const maxGuardDepth = 64

func guardNode(v any, depth int) *schema.Schema {
	m, ok := v.(map[string]any)
	if !ok || depth > maxGuardDepth {
		return &schema.Schema{}
	}
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef", "prefixItems", "patternProperties"} {
		if _, ok := m[k]; ok {
			return &schema.Schema{}
		}
	}
	typ, _ := m["type"].(string)
	s := &schema.Schema{Type: typ}
	switch typ {
	case "", "null", "boolean":
	case "string":
		if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
			s.Enum = enum
		}
	case "number", "integer":
		s.Minimum = exactBound(m["minimum"])
		s.Maximum = exactBound(m["maximum"])
	case "array":
		if n, ok := count(m["minItems"]); ok {
			s.MinItems = &n
		}
		if n, ok := count(m["maxItems"]); ok {
			s.MaxItems = &n
		}
		if items, ok := m["items"].(map[string]any); ok { // an array of schemas is a tuple in older drafts
			s.Items = guardNode(items, depth+1)
		}
	case "object":
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					s.Required = append(s.Required, name)
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			s.Properties = make(map[string]*schema.Schema, len(props))
			for name, p := range props {
				s.Properties[name] = guardNode(p, depth+1)
			}
		}
		switch ap := m["additionalProperties"].(type) {
		case bool:
			if !ap {
				s.AdditionalProperties = &schema.Schema{Not: &schema.Schema{}} // as inference writes false
			}
		case map[string]any:
			s.AdditionalProperties = guardNode(ap, depth+1)
		}
	default:
		s.Type = "" // not a type the guard knows
	}
	return s
}

// exactBound reads a minimum or maximum of a schema, or nil when a float64,
// which the guard compares with, cannot hold it exactly. jsonschema compares
// with the number as written; 0.1 or 9007199254740993 rounded would move
// the bound inward and refuse the values on it.
func exactBound(v any) *float64 {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := parseNumber(string(n), maxNumberLen, maxExponent)
	if !ok {
		return nil
	}
	f, exact := r.Float64()
	if !exact {
		return nil
	}
	return &f
}

// count reads a non-negative whole number of a schema.
func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64() // as jsonschema reads minItems
	if err != nil || f < 0 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// A raw tool's arguments go on to a server that may hold any number (a
// Python int, a JavaScript BigInt, a decimal library), so the guard bounds
// only what makes a number slow to parse as jsonschema parses it, in a
// big.Rat. Its time grows with the square of the digits past a few
// thousand (a million digits: 5 s), and with the power of ten the exponent
// asks for: 1e10000 costs about 30 times what "1," does per byte of
// arguments, 1e1000 about 4 times, 10,000 digits less.
const (
	maxRawNumberLen = 10_000
	maxRawExponent  = 1_000
)

// rawNumberProblem says what makes number n too slow to parse, or "".
func rawNumberProblem(n string) string {
	if len(n) > maxRawNumberLen {
		return fmt.Sprintf("number %s is too long: %d characters, more than %d", truncate(n, 40), len(n), maxRawNumberLen)
	}
	if exp, ok := exponent(n); !ok || exp > maxRawExponent || exp < -maxRawExponent {
		return fmt.Sprintf("number %s is out of range: its exponent is beyond ±%d", truncate(n, 40), maxRawExponent)
	}
	return ""
}

// numbers finds, in a value whose schema the guard does not know, the
// numbers that jsonschema could not parse safely (see [rawNumberProblem]):
// the schema may hold a keyword that makes jsonschema parse them.
func (g *guard) numbers(v any) {
	switch v := v.(type) {
	case json.Number:
		if problem := rawNumberProblem(string(v)); problem != "" {
			g.hazard = true
			g.add(g.path, problem, "")
		}
	case []any:
		for i, item := range v {
			g.path = append(g.path, strconv.Itoa(i))
			g.numbers(item)
			g.path = g.path[:len(g.path)-1]
		}
	case map[string]any:
		for name, pv := range v {
			g.path = append(g.path, name)
			g.numbers(pv)
			g.path = g.path[:len(g.path)-1]
		}
	}
}

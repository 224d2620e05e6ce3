package tools

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzRawGuard checks that the guard of a raw tool never finds a problem
// in arguments that jsonschema accepts, whatever keywords the schema uses.
func FuzzRawGuard(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3},"n":{"type":"integer","minimum":0,"maximum":9},"e":{"type":"string","enum":["x","y"]}},"required":["a"],"additionalProperties":false}`,
		`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"string"}},"m":{"type":"object","patternProperties":{"^x":{"type":"integer"}},"additionalProperties":false}},"additionalProperties":{"type":"boolean"}}`,
		`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"r":{"$ref":"#/$defs/s"},"u":{"type":["string","null"]},"o":{"anyOf":[{"type":"number","maximum":5},{"type":"string"}]}}}`,
		`{"type":"object","properties":{"w":{"type":"array","items":{"type":"number","minimum":0.1,"maximum":0.3}},"i":{"type":"integer","minimum":-9007199254740993,"maximum":9007199254740993}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"r":{"$ref":"#/definitions/s","type":"integer"},"tu":{"type":"array","items":[{"type":"string"}]}},"definitions":{"s":{"type":"string"}}}`,
	}
	for _, seed := range []string{`{}`, `{"a":[1,"x"],"n":1.5,"e":"z","q":1}`, `{"t":[1,"a",2],"m":{"x1":"s","y":1},"z":false}`, `{"r":"s","u":null,"o":"x","tu":["a",1]}`, `{"w":[0.1,0.3,0.2],"i":9007199254740993}`} {
		for i := range schemas {
			f.Add(i, []byte(seed))
		}
	}
	var tls []*Tool
	for _, s := range schemas {
		tl, err := NewRaw("raw", "Raw target.", json.RawMessage(s), nil, func(context.Context, Context, json.RawMessage) (Result, error) { return Result{}, nil })
		if err != nil {
			f.Fatal(err)
		}
		tls = append(tls, tl)
	}
	f.Fuzz(func(t *testing.T, which int, args []byte) {
		if which < 0 {
			which = -which
		}
		tl := tls[which%len(tls)]
		_, doc, problem := parseArgs(args)
		if problem != "" {
			return
		}
		g := guard{raw: true}
		g.numbers(doc)
		if g.hazard {
			return // jsonschema must not see this number
		}
		g.check(tl.rawGuard, doc)
		compiled, _ := tl.compiled()
		if err := compiled.Validate(doc); err == nil && g.count > 0 {
			t.Fatalf("jsonschema accepts %s, the guard found %d problems: %q", args, g.count, g.report())
		}
	})
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// RawHandler does the work of a tool made with [NewRaw]: it gets the
// arguments as JSON that satisfied the input schema, and returns the whole
// result. Like a [Handler], it returns a Go error only for what is not the
// model's to read (wrap it with [Halt]); a failed result is a Result with
// Success false.
type RawHandler func(ctx context.Context, tc Context, args json.RawMessage) (Result, error)

// NewRaw returns a tool whose input is described by a JSON Schema rather
// than a Go type: a tool proxied from elsewhere, such as an MCP server's.
// input must be a JSON object schema (draft 2020-12 unless it names
// another draft in $schema; references to other documents are not loaded);
// output may be nil. Call validates the arguments against input, with the
// same messages as for a typed tool, before h runs.
func NewRaw(name, description string, input, output json.RawMessage, h RawHandler) (*Tool, error) {
	if err := checkSpec(name, description, h == nil); err != nil {
		return nil, fmt.Errorf("tools: new raw: %w", err)
	}
	fail := func(format string, args ...any) (*Tool, error) {
		return nil, fmt.Errorf("tools: new raw: tool %q: "+format, append([]any{name}, args...)...)
	}
	var probe map[string]any
	if err := json.Unmarshal(input, &probe); err != nil {
		return fail("input schema: want a JSON object: %v", err)
	}
	compiled, err := compileRaw(input)
	if err != nil {
		return fail("input schema: %w", err)
	}
	t := &Tool{
		name:        name,
		description: description,
		input:       bytes.Clone(input),
		output:      bytes.Clone(output),
		compiled:    func() (*jsonschema.Schema, error) { return compiled, nil },
		rawGuard:    guardSchema(input),
	}
	t.run = func(ctx context.Context, tc Context, args []byte) (res Result, end ending, err error) {
		defer func() {
			if r := recover(); r != nil {
				res, end, err = Result{Message: fmt.Sprintf("Tool %s panicked: %v", name, r)}, panicked, nil
			}
		}()
		res, err = h(ctx, tc, json.RawMessage(args))
		return res, returned, err
	}
	return t, nil
}

// compileRaw compiles a schema from elsewhere. It loads no other document:
// a $ref to one fails here, not at a call.
func compileRaw(input json.RawMessage) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, errors.New("references to other documents are not loaded: " + url)
	}
	const url = "mem://tools/raw-input.json"
	if err := c.AddResource(url, bytes.NewReader(input)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

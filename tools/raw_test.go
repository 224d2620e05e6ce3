package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

// upstreamSchema is a schema as MCP servers write them: draft-07, nested.
const upstreamSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
"properties":{"path":{"type":"string"},"lines":{"type":"array","items":{"type":"integer","minimum":1}}},
"required":["path"],"additionalProperties":false}`

func TestNewRaw(t *testing.T) {
	var got json.RawMessage
	tool, err := tools.NewRaw("fs__read", "Read a file.", json.RawMessage(upstreamSchema), nil,
		func(_ context.Context, _ tools.Context, args json.RawMessage) (tools.Result, error) {
			got = args
			return tools.Result{Message: "read", Success: true}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if string(tool.InputSchema()) != upstreamSchema {
		t.Errorf("got input schema %s, want the upstream's as given", tool.InputSchema())
	}
	tests := []struct {
		name, args string
		ok         bool
		want       string
	}{
		{"valid", `{"path":"a.txt","lines":[1,2]}`, true, "read"},
		{"missing required", `{}`, false, "Invalid arguments: (root): missing properties: 'path'"},
		{"wrong type", `{"path":3}`, false, "Invalid arguments: path: expected string, but got number"},
		{"below minimum", `{"path":"a","lines":[0]}`, false, "Invalid arguments: lines/0: must be >= 1 but found 0"},
		{"unknown property", `{"path":"a","mode":"x"}`, false, "Invalid arguments:"},
		{"not JSON", `{"path":`, false, "Invalid arguments: not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			res, err := tool.Call(t.Context(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.Success != tt.ok || !strings.HasPrefix(res.Message, tt.want) {
				t.Errorf("got %v %q, want %v and a message starting %q", res.Success, res.Message, tt.ok, tt.want)
			}
			if tt.ok != (got != nil) {
				t.Errorf("handler ran: %v, want %v", got != nil, tt.ok)
			}
		})
	}
}

func TestNewRawErrors(t *testing.T) {
	h := func(context.Context, tools.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{}, nil
	}
	tests := []struct{ name, tool, schema, want string }{
		{"bad name", "a.b", `{"type":"object"}`, "invalid tool name"},
		{"not an object", "a", `[]`, "want a JSON object"},
		{"remote reference", "a", `{"$ref":"https://example.com/s.json"}`, "references to other documents are not loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tools.NewRaw(tt.tool, "d", json.RawMessage(tt.schema), nil, h)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

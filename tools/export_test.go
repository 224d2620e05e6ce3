package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

func TestExport(t *testing.T) {
	type in struct {
		Q string `json:"q"`
	}
	type out struct {
		N int `json:"n"`
	}
	search := tools.MustNew("search", "Search.", func(context.Context, tools.Context, in) (out, error) { return out{}, nil })
	echo := tools.MustNew("echo", "Echo.", func(context.Context, tools.Context, in) (string, error) { return "", nil }).
		WithHints(tools.Hints{ReadOnly: true, Idempotent: true})
	set := []*tools.Tool{search, echo}
	schema := string(search.InputSchema())
	tests := []struct {
		name   string
		export func([]*tools.Tool) (json.RawMessage, error)
		want   string
	}{
		{"openai", tools.OpenAITools,
			`[{"type":"function","function":{"name":"search","description":"Search.","parameters":` + schema + `}},` +
				`{"type":"function","function":{"name":"echo","description":"Echo.","parameters":` + schema + `}}]`},
		{"anthropic", tools.AnthropicTools,
			`[{"name":"search","description":"Search.","input_schema":` + schema + `},` +
				`{"name":"echo","description":"Echo.","input_schema":` + schema + `}]`},
		{"mcp", tools.MCPTools,
			`[{"name":"search","description":"Search.","inputSchema":` + schema + `,"outputSchema":` + string(search.OutputSchema()) + `},` +
				`{"name":"echo","description":"Echo.","inputSchema":` + schema + `,` +
				`"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.export(set)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(tt.want)) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if _, err := tt.export([]*tools.Tool{nil}); err == nil {
				t.Error("nil tool: got nil error, want one")
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

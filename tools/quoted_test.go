package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/tools"
)

type quotedIn struct {
	N     int     `json:"n,string" description:"How many."`
	U     uint8   `json:"u,string,omitempty"`
	F     float32 `json:"f,string,omitempty"`
	B     bool    `json:"b,string,omitempty"`
	S     string  `json:"s,string,omitempty"`
	Items []struct {
		S string `json:"s,string"`
	} `json:"items,omitempty"`
}

func quotedTool(t *testing.T) *tools.Tool {
	t.Helper()
	tl, err := tools.New("quoted", "Takes numbers in strings.", func(_ context.Context, _ tools.Context, in quotedIn) (string, error) {
		return fmt.Sprintf("%d %d %g %v %s", in.N, in.U, in.F, in.B, in.S), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestQuotedSchema: a field with the ",string" option takes its value in a
// JSON string, and its schema says what the string holds, by a pattern (or
// the values, for a boolean) and in its description.
func TestQuotedSchema(t *testing.T) {
	var doc struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Pattern     string `json:"pattern"`
			Enum        []string
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(quotedTool(t).InputSchema(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ field, pattern, enum, description string }{
		{"n", `^-?[0-9]+$`, "", `How many. Send an integer written as a string, like "42".`},
		{"u", `^[0-9]+$`, "", `Send a whole number of 0 or more written as a string, like "42".`},
		{"f", `^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`, "", `Send a number written as a string, like "1.5".`},
		{"b", "", "true false", `Send "true" or "false", a boolean written as a string.`},
		{"s", `^"([^"\\]|\\.)*"$`, "", `Send a JSON string written as a string, like "\"text\"".`},
	} {
		p := doc.Properties[tc.field]
		if p.Type != "string" || p.Pattern != tc.pattern || strings.Join(p.Enum, " ") != tc.enum || p.Description != tc.description {
			t.Errorf("%s: got %+v, want type string, pattern %q, enum %q, description %q", tc.field, p, tc.pattern, tc.enum, tc.description)
		}
	}
}

// TestQuotedArguments: a value a ",string" field cannot take is refused
// with the field's path and what to send, whether the schema catches it or
// only decoding does.
func TestQuotedArguments(t *testing.T) {
	tl := quotedTool(t)
	for _, tc := range []struct{ name, args, want string }{
		{"ok", `{"n":"7","u":"255","f":"1.5","b":"true","s":"\"hi\""}`, "7 255 1.5 true hi"},
		{"word", `{"n":"x"}`, `Invalid arguments: n: cannot use "x" here; send an integer written as a string, like "42"`},
		{"number not in a string", `{"n":3}`, `Invalid arguments: n: cannot use 3 here; send an integer written as a string, like "42"`},
		{"fraction", `{"n":"1.5"}`, `Invalid arguments: n: cannot use "1.5" here; send an integer written as a string, like "42"`},
		{"negative uint", `{"n":"1","u":"-1"}`, `Invalid arguments: u: cannot use "-1" here; send a whole number of 0 or more written as a string, like "42"`},
		{"out of range", `{"n":"1","u":"300"}`, `Invalid arguments: u: number 300 is out of range (0 to 255)`},
		{"boolean", `{"n":"1","b":"yes"}`, `Invalid arguments: b: value must be one of "true", "false"`},
		{"bare string", `{"n":"1","s":"abc"}`, `Invalid arguments: s: cannot use "abc" here; send a JSON string written as a string, like "\"text\""`},
		// The pattern lets any escape through; decoding refuses \q.
		{"bad escape", `{"n":"1","s":"\"a\\q\""}`, `Invalid arguments: s: cannot use "\"a\\q\"" here; send a JSON string written as a string, like "\"text\""`},
		{"bad escape in a list", `{"n":"1","items":[{"s":"\"ok\""},{"s":"\"a\\q\""}]}`, `Invalid arguments: items/1/s: cannot use "\"a\\q\"" here; send a JSON string written as a string, like "\"text\""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tl.Call(context.Background(), tools.Context{}, []byte(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.Message != tc.want || res.Success != (tc.name == "ok") {
				t.Errorf("got %v %q, want %q", res.Success, res.Message, tc.want)
			}
		})
	}
}

// TestCallNilTool: calling a nil tool, what a lookup returns for a name
// that is not offered, or a zero one, is an error that says so rather than
// a panic.
func TestCallNilTool(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool *tools.Tool
		want string
	}{
		{"nil", nil, "tools: call: nil tool: there is no tool to call"},
		{"zero", &tools.Tool{}, "tools: call: zero tool: it has no name or handler; make tools with tools.New or tools.NewRaw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.tool.Call(context.Background(), tools.Context{}, []byte(`{}`))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || res.Success || res.Message != err.Error() {
				t.Errorf("got %+v, %v; want a failed result and an error starting %q", res, err, tc.want)
			}
		})
	}
}

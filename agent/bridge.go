package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/tools"
)

// UseToolName is the tool through which, with [DisclosureAppend], a model
// whose API neither defers tools nor keeps a cached prefix past a grown
// tool list calls the tools of sections opened during the run (see
// [WithToolBridge]).
const UseToolName = "use_tool"

// useToolInput is the input of use_tool.
type useToolInput struct {
	Name  string         `json:"name" description:"The name of a tool an opened section offers, as its opening listed it; a tool of a section not yet open opens that section first."`
	Input map[string]any `json:"input,omitempty" description:"The tool's input, as its input schema describes it."`
}

// newUseTool returns use_tool's definition; the loop runs its calls.
func newUseTool() *tools.Tool {
	return tools.MustNew(UseToolName,
		"Call a tool of a section opened during this conversation. Opening a section lists its tools with their input schemas; they are called through this tool.",
		func(context.Context, tools.Context, useToolInput) (string, error) {
			return "", errors.New("use_tool: calls run in the agent loop")
		})
}

// bridged reports whether the tools of sections opened during the run are
// called through use_tool rather than added to the tool list.
func (r *run) bridged(t *tools.Tool) bool {
	_, deferred := r.owner[t.Name()]
	return r.bridge != nil && deferred
}

// useTool runs a call of use_tool: a tool an opened section offers, or
// one of a section not open yet, which opens it first.
func (r *run) useTool(args string) (tools.Result, error) {
	name, input, why := readUseTool(args)
	if why != "" {
		return tools.Result{Message: fmt.Sprintf(`%s takes {"name": "TOOL", "input": {...}} (%s).`, UseToolName, why)}, nil
	}
	if name == UseToolName {
		return tools.Result{Message: UseToolName + " cannot call itself; give the name of a tool an opened section offers."}, nil
	}
	if _, ok := r.byName[name]; !ok {
		if path, deferred := r.owner[name]; deferred {
			return r.openAndCall(name, path, input)
		}
	}
	return r.dispatch(name, input)
}

// readUseTool reads use_tool's arguments: the tool's name and its input
// ("{}" when there is none), or why they are wrong, in the model's terms.
func readUseTool(args string) (name, input, why string) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(orEmpty(args)), &obj) != nil {
		return "", "", "the arguments are not a JSON object"
	}
	raw, ok := obj["name"]
	switch {
	case !ok || string(raw) == "null":
		return "", "", "name is missing"
	case json.Unmarshal(raw, &name) != nil:
		return "", "", "name must be a string, the tool's name"
	case name == "":
		return "", "", "name is empty"
	}
	in := bytes.TrimSpace(obj["input"])
	if len(in) == 0 || string(in) == "null" {
		return name, "{}", ""
	}
	if in[0] != '{' {
		return "", "", "input must be a JSON object, the tool's arguments"
	}
	return name, string(in), ""
}

// bridgedNames returns the tools use_tool can call now.
func (r *run) bridgedNames() []string {
	var names []string
	for name, t := range r.byName {
		if r.bridged(t) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// newToolsText lists the tools an opening added with their input schemas,
// for an answer when the tool list stays as it was.
func (r *run) newToolsText(names []string) string {
	var b strings.Builder
	b.WriteString("New tools and their input schemas")
	if r.bridge != nil {
		b.WriteString(", called through " + UseToolName)
	}
	b.WriteString(":\n\n")
	for _, name := range names {
		if t, ok := r.byName[name]; ok {
			b.WriteString(toolLine(t))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

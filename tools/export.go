package tools

import (
	"encoding/json"
	"fmt"
)

// OpenAITools returns ts as the "tools" array of an OpenAI chat completions
// request: {"type":"function","function":{"name","description","parameters"}}
// per tool, in order.
func OpenAITools(ts []*Tool) (json.RawMessage, error) {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type entry struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	out := make([]entry, 0, len(ts))
	for _, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tools: openai tools: nil tool at index %d", len(out))
		}
		out = append(out, entry{Type: "function", Function: function{Name: t.name, Description: t.description, Parameters: t.input}})
	}
	return marshalSet("openai tools", out)
}

// AnthropicTools returns ts as the "tools" array of an Anthropic messages
// request: {"name","description","input_schema"} per tool, in order.
func AnthropicTools(ts []*Tool) (json.RawMessage, error) {
	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	out := make([]entry, 0, len(ts))
	for _, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tools: anthropic tools: nil tool at index %d", len(out))
		}
		out = append(out, entry{Name: t.name, Description: t.description, InputSchema: t.input})
	}
	return marshalSet("anthropic tools", out)
}

// MCPTools returns ts as the "tools" array of a Model Context Protocol
// tools/list result: {"name","description","inputSchema"} per tool, in order,
// plus "outputSchema" when the tool's output is a JSON object (MCP allows
// only object output schemas) and "annotations" when the tool carries
// [Hints] (the hints at the value MCP assumes when they are absent left
// out).
func MCPTools(ts []*Tool) (json.RawMessage, error) {
	type annotations struct {
		ReadOnly    bool  `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint,omitempty"`
		Idempotent  bool  `json:"idempotentHint"`
		OpenWorld   *bool `json:"openWorldHint,omitempty"`
	}
	type entry struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  *annotations    `json:"annotations,omitempty"`
	}
	out := make([]entry, 0, len(ts))
	for _, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tools: mcp tools: nil tool at index %d", len(out))
		}
		e := entry{Name: t.name, Description: t.description, InputSchema: t.input}
		if objectSchema(t.output) {
			e.OutputSchema = t.output
		}
		if h, ok := t.Hints(); ok {
			e.Annotations = &annotations{ReadOnly: h.ReadOnly, Idempotent: h.Idempotent}
			// What MCP assumes of an absent hint is left out, and so is
			// destructiveHint for a read-only tool, where it means nothing.
			if !h.ReadOnly && !h.Destructive {
				e.Annotations.Destructive = new(false)
			}
			if !h.OpenWorld {
				e.Annotations.OpenWorld = new(false)
			}
		}
		out = append(out, e)
	}
	return marshalSet("mcp tools", out)
}

// objectSchema reports whether schema describes a JSON object.
func objectSchema(schema json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	return s.Type == "object"
}

func marshalSet(op string, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("tools: %s: %w", op, err)
	}
	return b, nil
}

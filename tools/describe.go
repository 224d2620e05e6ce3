package tools

import (
	"fmt"
	"maps"
	"slices"
)

// WithInputDescriptions returns a copy of t whose input fields named in
// d, by their JSON names, are described by d's text instead; t itself is
// not changed. One Go type then serves tools whose fields mean the same
// with other values: an environment's command tool names that
// environment's own limits. It fails for a tool made with [NewRaw], whose
// schema is not inferred, and for a name that is not a field of the
// input.
func (t *Tool) WithInputDescriptions(d map[string]string) (*Tool, error) {
	if t.inputSchema == nil {
		return nil, fmt.Errorf("tools: describe input of %s: the tool's input schema is not inferred from a type", t.name)
	}
	in := t.inputSchema.CloneSchemas() // shared with every tool of the same types
	for _, name := range slices.Sorted(maps.Keys(d)) {
		f, ok := in.Properties[name]
		if !ok {
			return nil, fmt.Errorf("tools: describe input of %s: no field %q in the input", t.name, name)
		}
		f.Description = d[name]
	}
	input, err := encode(in)
	if err != nil {
		return nil, fmt.Errorf("tools: describe input of %s: %w", t.name, err)
	}
	c := *t
	c.inputSchema, c.input = in, input
	return &c, nil
}

package orchestrator

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// schemaError turns a schema validation error into one message naming each
// failing field.
func schemaError(err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			msgs = append(msgs, leafMessage(v)...)
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(msgs)
	msgs = slices.Compact(msgs)
	return errors.New(strings.Join(msgs, "; "))
}

func leafMessage(v *jsonschema.ValidationError) []string {
	field := fieldName(v.InstanceLocation)
	prefix := ""
	if field != "" {
		prefix = fmt.Sprintf("field %q: ", field)
	}
	keyword := v.KeywordLocation[strings.LastIndexByte(v.KeywordLocation, '/')+1:]
	switch keyword {
	case "required":
		var out []string
		for _, n := range quotedNames(strings.TrimPrefix(v.Message, "missing properties: ")) {
			out = append(out, fmt.Sprintf("%smissing field %q", prefix, n))
		}
		return out
	case "additionalProperties":
		names := strings.TrimSuffix(strings.TrimPrefix(v.Message, "additionalProperties "), " not allowed")
		var out []string
		for _, n := range quotedNames(names) {
			out = append(out, fmt.Sprintf("%sunknown field %q", prefix, n))
		}
		return out
	case "enum":
		if field == "kind" {
			return []string{`field "kind": unknown kind; want "interactive" or "process"`}
		}
	case "type":
		return []string{prefix + "wrong type: " + v.Message}
	}
	return []string{prefix + v.Message}
}

// quotedNames splits the library's "'a', 'b'" lists.
func quotedNames(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ", ") {
		part = strings.TrimSpace(part)
		if len(part) >= 2 && part[0] == '\'' && part[len(part)-1] == '\'' {
			part = strings.ReplaceAll(part[1:len(part)-1], `\'`, `'`)
		}
		out = append(out, part)
	}
	return out
}

// fieldName turns a JSON pointer into a field path: /args/0 -> args[0].
func fieldName(ptr string) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	for i, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil && i > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

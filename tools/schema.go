package tools

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	schema "github.com/google/jsonschema-go/jsonschema"
)

// TypeError reports a Go type that has no JSON schema: channels, functions,
// complex numbers, unsafe pointers, maps whose keys are not strings,
// recursive types, and struct layouts whose schema would not say what
// encoding/json decodes. [New] returns it (wrapped) naming the field path
// where the type was found.
type TypeError struct {
	Path   string       // Go field path from the input or output type, like "Items[].Next"; "" for the type itself
	Type   reflect.Type // the offending type
	Reason string       // why it has no schema, and what to do instead
}

// Error says where the type was found, what it is and why it has no schema.
func (e *TypeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("unsupported type %s: %s", e.Type, e.Reason)
	}
	return fmt.Sprintf("field %s: unsupported type %s: %s", e.Path, e.Type, e.Reason)
}

// infer returns the schema of type t. jsonschema-go infers it: property
// names from json tags, fields without omitempty or omitzero required, no
// other properties on structs. What it lacks is added here: a check of t
// first (check), the schemas of the types encoding/json writes otherwise
// than their kind says (known), the description, enum and ",string" tags
// (annotate), and JSON in the form model APIs take (encode).
func infer(t reflect.Type) (*schema.Schema, error) {
	c := typeCheck{known: map[reflect.Type]*schema.Schema{}, active: map[reflect.Type]bool{}}
	if err := c.check(t, ""); err != nil {
		return nil, err
	}
	s, err := schema.ForType(t, &schema.ForOptions{TypeSchemas: c.known})
	if err != nil {
		return nil, err
	}
	annotate(t, s, c.known)
	return s, nil
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// known returns the schema of a type that encoding/json writes otherwise
// than its kind says, or nil. jsonschema-go knows only a few such types, and
// gets some of them wrong (big.Int is a JSON number, not a string).
func known(t reflect.Type) *schema.Schema {
	switch t {
	case timeType:
		return &schema.Schema{Type: "string", Format: "date-time"}
	case numberType:
		return &schema.Schema{Type: "number"}
	}
	implements := func(t reflect.Type, ifaces ...reflect.Type) bool {
		return slices.ContainsFunc(ifaces, func(i reflect.Type) bool { return t.Implements(i) || reflect.PointerTo(t).Implements(i) })
	}
	switch {
	case implements(t, jsonMarshalerType, jsonUnmarshalerType):
		// Any JSON value: json.RawMessage, and types that decide their own.
		return &schema.Schema{}
	case implements(t, textMarshalerType, textUnmarshalerType):
		return &schema.Schema{Type: "string"}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), jsonMarshalerType, textMarshalerType):
		return &schema.Schema{Type: "string", ContentEncoding: "base64"}
	}
	return nil
}

// typeCheck walks a type before jsonschema-go does, to name the field path of
// what has no schema, and to collect the known types.
type typeCheck struct {
	known map[reflect.Type]*schema.Schema
	// active holds the composite types being walked on the current path;
	// meeting one again means the type is recursive.
	active map[reflect.Type]bool
}

func (c *typeCheck) check(t reflect.Type, path string) error {
	if _, ok := c.known[t]; ok {
		return nil
	}
	if t.Kind() != reflect.Pointer { // jsonschema-go looks types up after following pointers
		if s := known(t); s != nil {
			c.known[t] = s
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Chan:
		return &TypeError{path, t, "channels have no JSON form"}
	case reflect.Func:
		return &TypeError{path, t, "functions have no JSON form"}
	case reflect.Complex64, reflect.Complex128:
		return &TypeError{path, t, "complex numbers have no JSON form; use two float fields"}
	case reflect.UnsafePointer:
		return &TypeError{path, t, "unsafe pointers have no JSON form"}
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		if c.active[t] {
			return &TypeError{path, t, "recursive types are not supported; cut the cycle, for example with a json.RawMessage field"}
		}
		c.active[t] = true
		defer delete(c.active, t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return c.check(t.Elem(), path)
	case reflect.Slice, reflect.Array:
		return c.check(t.Elem(), path+"[]")
	case reflect.Map:
		if t.Key().Kind() != reflect.String && !t.Key().Implements(textMarshalerType) {
			return &TypeError{path, t, "map keys must be strings"}
		}
		return c.check(t.Elem(), path+"[]")
	case reflect.Struct:
		return c.fields(t, path)
	}
	return nil
}

// fields checks the fields of struct type t. jsonschema-go finds them with
// reflect.VisibleFields and flattens every embedded struct, where
// encoding/json tells fields apart by their JSON names and keeps a tagged
// embedded struct as one field; the layouts where the two would disagree are
// refused, so the schema never accepts what decoding drops. (A promoted
// field that a Go field of the same name hides is left out, as in Go, where
// encoding/json may keep it under another JSON name: the schema is then
// stricter than decoding, not looser.)
func (c *typeCheck) fields(t reflect.Type, path string) error {
	names := map[string]bool{}
	for _, f := range reflect.VisibleFields(t) {
		fpath := goPath(t, f.Index)
		if path != "" {
			fpath = path + "." + fpath
		}
		if f.Anonymous {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if (f.IsExported() || et.Kind() == reflect.Struct) && (name != "" || et.Kind() != reflect.Struct) {
				return &TypeError{fpath, f.Type, "an embedded field is flattened only when it is a struct without a json name; make it a named field"}
			}
			continue
		}
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		if !validTagName(name) {
			return &TypeError{fpath, f.Type, fmt.Sprintf("encoding/json ignores the json name %q and uses %s; use letters, digits and punctuation other than quotes and backslashes", name, f.Name)}
		}
		if names[name] {
			return &TypeError{fpath, f.Type, fmt.Sprintf("another field of %s is named %q in JSON; give one of them another json name", t, name)}
		}
		names[name] = true
		if err := c.check(f.Type, fpath); err != nil {
			return err
		}
		if e, ok := f.Tag.Lookup("enum"); ok {
			if err := c.checkEnum(f.Type, e, false); err != nil {
				return &TypeError{fpath, f.Type, err.Error()}
			}
		}
	}
	return nil
}

// checkEnum checks an `enum:"a,b,c"` tag on a field of type t: it applies to
// string fields and lists of strings.
func (c *typeCheck) checkEnum(t reflect.Type, tag string, inList bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, isKnown := c.known[t]
	switch {
	case isKnown && s.Type == "string" && s.Format == "" && s.ContentEncoding == "",
		!isKnown && t.Kind() == reflect.String:
	case !isKnown && !inList && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		return c.checkEnum(t.Elem(), tag, true)
	default:
		return fmt.Errorf("the enum tag applies to string fields and lists of strings only")
	}
	values := strings.Split(tag, ",")
	for i, v := range values {
		if v == "" {
			return fmt.Errorf("enum tag %q has an empty value; write it as enum:\"a,b,c\"", tag)
		}
		if slices.Contains(values[:i], v) {
			return fmt.Errorf("enum tag %q lists %q twice", tag, v)
		}
	}
	return nil
}

// annotate applies the tags of the struct fields in t to s, the schema
// jsonschema-go inferred from t with the known types.
func annotate(t reflect.Type, s *schema.Schema, known map[reflect.Type]*schema.Schema) {
	if types := s.Types; slices.Contains(types, "null") {
		// jsonschema-go lets pointers and slices take null, writing
		// "type":["null",T] (or ["null"] for "any value", which it thereby
		// loses). Some model APIs take one type only (Gemini's, older
		// Ollama's), so T stays alone, as for the other Go types whose
		// JSON null decodes too.
		s.Types = nil
		for _, typ := range types {
			if typ != "null" {
				s.Type = typ
			}
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if known[t] != nil {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		annotate(t.Elem(), s.Items, known)
	case reflect.Map:
		annotate(t.Elem(), s.AdditionalProperties, known)
	case reflect.Struct:
		if s.Properties == nil {
			s.Properties = map[string]*schema.Schema{} // "properties": {}, which some model APIs require of an object
		}
		for _, f := range reflect.VisibleFields(t) {
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			p := s.Properties[name]
			annotate(f.Type, p, known)
			if quoted(f) {
				// The value comes inside a JSON string: the schema says
				// what the string holds, the description says it again
				// for a model that reads no pattern.
				q := quotedForm(f.Type)
				*p = schema.Schema{Type: "string", Pattern: q.pattern, Enum: q.enum, Description: "Send " + q.want + "."}
			}
			if d, ok := f.Tag.Lookup("description"); ok {
				p.Description = strings.TrimSpace(d + " " + p.Description)
			}
			if e, ok := f.Tag.Lookup("enum"); ok {
				target := p
				if p.Items != nil {
					target = p.Items
				}
				for v := range strings.SplitSeq(e, ",") {
					target.Enum = append(target.Enum, v)
				}
			}
		}
	}
}

// jsonName returns the property name jsonschema-go gives a field that is
// not embedded, or false when the field is left out.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if f.Anonymous || !f.IsExported() || tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}

// quotedText is what a field with the ",string" option takes: a pattern or
// the values its string matches, and what to send, for messages.
type quotedText struct {
	pattern string
	enum    []any
	want    string
}

// Patterns of the strings encoding/json decodes into a field with the
// ",string" option: the number, boolean or JSON string inside the quotes.
const (
	quotedInt    = `^-?[0-9]+$`
	quotedUint   = `^[0-9]+$`
	quotedFloat  = `^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	quotedString = `^"([^"\\]|\\.)*"$`
)

// quotedForms maps each pattern to what to send, for validation messages.
var quotedForms = map[string]string{
	quotedInt:    `an integer written as a string, like "42"`,
	quotedUint:   `a whole number of 0 or more written as a string, like "42"`,
	quotedFloat:  `a number written as a string, like "1.5"`,
	quotedString: `a JSON string written as a string, like "\"text\""`,
}

// quotedForm is what a field of type t with the ",string" option takes.
func quotedForm(t reflect.Type) quotedText {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var pattern string
	switch t.Kind() {
	case reflect.Bool:
		return quotedText{enum: []any{"true", "false"}, want: `"true" or "false", a boolean written as a string`}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		pattern = quotedInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		pattern = quotedUint
	case reflect.Float32, reflect.Float64:
		pattern = quotedFloat
	default:
		pattern = quotedString
	}
	return quotedText{pattern: pattern, want: quotedForms[pattern]}
}

// quoted reports whether a field has the ",string" option, which
// encoding/json applies to scalars only.
func quoted(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !slices.Contains(strings.Split(opts, ","), "string") {
		return false
	}
	t := f.Type
	if t.Name() == "" && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	k := t.Kind() // Bool to Float64 are the booleans and numbers
	return k >= reflect.Bool && k <= reflect.Float64 || k == reflect.String
}

// goPath is the Go selector of the field at index in struct type t,
// "Base.ID" for a promoted field.
func goPath(t reflect.Type, index []int) string {
	names := make([]string, len(index))
	for i := range index {
		names[i] = t.FieldByIndex(index[:i+1]).Name
	}
	return strings.Join(names, ".")
}

// validTagName reports whether encoding/json accepts name from a json tag
// (Go field names pass); it falls back to the Go field name otherwise.
func validTagName(name string) bool {
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// encode writes s as JSON for model APIs: in the key order tools' schemas
// have always had (text-mode prompts show them), with {} rather than true
// for a schema that allows any value, since some providers reject true, and
// without HTML escapes, so descriptions read as written. jsonschema-go's
// own MarshalJSON orders the keys otherwise and does neither.
func encode(s *schema.Schema) (json.RawMessage, error) {
	return marshal(toWire(s))
}

// marshal writes v as compact JSON without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// wire is the JSON form of an inferred schema: the keywords inference
// writes, in a fixed order. TestEncodeKeepsEveryKeyword checks that no
// keyword of jsonschema-go's is left out.
type wire struct {
	Type                 string      `json:"type,omitempty"`
	Format               string      `json:"format,omitempty"`
	ContentEncoding      string      `json:"contentEncoding,omitempty"`
	Pattern              string      `json:"pattern,omitempty"`
	Description          string      `json:"description,omitempty"`
	Enum                 []any       `json:"enum,omitempty"`
	Minimum              *float64    `json:"minimum,omitempty"`
	Maximum              *float64    `json:"maximum,omitempty"`
	MinItems             *int        `json:"minItems,omitempty"`
	MaxItems             *int        `json:"maxItems,omitempty"`
	Items                *wire       `json:"items,omitempty"`
	Properties           *properties `json:"properties,omitempty"` // nil: no key; empty: "properties": {}
	Required             []string    `json:"required,omitempty"`
	AdditionalProperties any         `json:"additionalProperties,omitempty"` // false or a *wire
}

// properties are an object's properties in the order of its fields.
type properties struct {
	names   []string
	schemas []*wire
}

// MarshalJSON writes the properties in field order, without HTML escapes.
func (p *properties) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, name := range p.names {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := marshal(p.schemas[i])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

func toWire(s *schema.Schema) *wire {
	if s == nil {
		return nil
	}
	w := &wire{
		Type: s.Type, Format: s.Format, ContentEncoding: s.ContentEncoding, Pattern: s.Pattern,
		Description: s.Description, Enum: s.Enum,
		Minimum: s.Minimum, Maximum: s.Maximum, MinItems: s.MinItems, MaxItems: s.MaxItems,
		Items: toWire(s.Items), Required: s.Required,
	}
	if s.Properties != nil {
		w.Properties = &properties{}
		for _, name := range s.PropertyOrder {
			w.Properties.names = append(w.Properties.names, name)
			w.Properties.schemas = append(w.Properties.schemas, toWire(s.Properties[name]))
		}
	}
	switch {
	case closed(s):
		w.AdditionalProperties = false
	case s.AdditionalProperties != nil:
		w.AdditionalProperties = toWire(s.AdditionalProperties)
	}
	return w
}

package tools

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// TypeError reports a Go type that has no JSON schema: channels, functions,
// complex numbers, unsafe pointers, maps whose keys are not strings, and
// recursive types. [New] returns it (wrapped) naming the field path where the
// type was found.
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

// schema is the subset of JSON Schema that inference produces. It is written
// out by appendJSON in a fixed key order, so the same Go type always gives the
// same bytes.
type schema struct {
	Type            string
	Format          string
	ContentEncoding string
	Description     string
	Enum            []string
	Minimum         *int64
	MaxItems        *int
	Items           *schema
	Properties      []property // nil: no "properties" key; empty: "properties": {}
	hasProperties   bool
	Required        []string
	// Additional is "additionalProperties": nil leaves it out, noAdditional
	// writes false, any other schema is written as a schema.
	Additional *schema
}

type property struct {
	Name   string
	Schema *schema
}

// noAdditional stands for "additionalProperties": false.
var noAdditional = &schema{}

func (s *schema) property(name string) *schema {
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

func (s *schema) marshal() json.RawMessage {
	var b bytes.Buffer
	s.appendJSON(&b)
	return b.Bytes()
}

func (s *schema) appendJSON(b *bytes.Buffer) {
	b.WriteByte('{')
	first := true
	key := func(k string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeString(b, k)
		b.WriteByte(':')
	}
	if s.Type != "" {
		key("type")
		writeString(b, s.Type)
	}
	if s.Format != "" {
		key("format")
		writeString(b, s.Format)
	}
	if s.ContentEncoding != "" {
		key("contentEncoding")
		writeString(b, s.ContentEncoding)
	}
	if s.Description != "" {
		key("description")
		writeString(b, s.Description)
	}
	if len(s.Enum) > 0 {
		key("enum")
		writeStrings(b, s.Enum)
	}
	if s.Minimum != nil {
		key("minimum")
		b.WriteString(strconv.FormatInt(*s.Minimum, 10))
	}
	if s.MaxItems != nil {
		key("maxItems")
		b.WriteString(strconv.Itoa(*s.MaxItems))
	}
	if s.Items != nil {
		key("items")
		s.Items.appendJSON(b)
	}
	if s.hasProperties {
		key("properties")
		b.WriteByte('{')
		for i, p := range s.Properties {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, p.Name)
			b.WriteByte(':')
			p.Schema.appendJSON(b)
		}
		b.WriteByte('}')
	}
	if len(s.Required) > 0 {
		key("required")
		writeStrings(b, s.Required)
	}
	switch s.Additional {
	case nil:
	case noAdditional:
		key("additionalProperties")
		b.WriteString("false")
	default:
		key("additionalProperties")
		s.Additional.appendJSON(b)
	}
	b.WriteByte('}')
}

// writeString writes s as a JSON string without HTML escaping, so
// descriptions with <, > and & stay readable in the schema.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

func writeStrings(b *bytes.Buffer, ss []string) {
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, s)
	}
	b.WriteByte(']')
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// inferrer turns Go types into schemas.
type inferrer struct {
	// active holds the composite types being expanded on the current path;
	// meeting one again means the type is recursive.
	active map[reflect.Type]bool
}

// inferObject returns the schema of the struct type t, which must be the
// input type of a tool.
func inferObject(t reflect.Type) (*schema, error) {
	inf := &inferrer{active: make(map[reflect.Type]bool)}
	inf.active[t] = true
	return inf.object(t, "")
}

// inferAny returns the schema of any supported type t.
func inferAny(t reflect.Type) (*schema, error) {
	inf := &inferrer{active: make(map[reflect.Type]bool)}
	return inf.infer(t, "")
}

// custom reports whether t decides its own JSON form through a method, which
// the schema cannot see into: json.Marshaler or json.Unmarshaler give any
// JSON value, encoding.TextMarshaler or TextUnmarshaler give a string.
func custom(t reflect.Type) (s *schema, ok bool) {
	p := reflect.PointerTo(t)
	switch {
	case t.Implements(jsonMarshalerType), p.Implements(jsonMarshalerType),
		t.Implements(jsonUnmarshalerType), p.Implements(jsonUnmarshalerType):
		return &schema{}, true
	case t.Implements(textMarshalerType), p.Implements(textMarshalerType),
		t.Implements(textUnmarshalerType), p.Implements(textUnmarshalerType):
		return &schema{Type: "string"}, true
	}
	return nil, false
}

func (inf *inferrer) infer(t reflect.Type, path string) (*schema, error) {
	switch t {
	case timeType:
		return &schema{Type: "string", Format: "date-time"}, nil
	case rawMessageType:
		return &schema{}, nil
	case numberType:
		return &schema{Type: "number"}, nil
	}
	switch t.Kind() {
	case reflect.Chan:
		return nil, &TypeError{path, t, "channels have no JSON form"}
	case reflect.Func:
		return nil, &TypeError{path, t, "functions have no JSON form"}
	case reflect.Complex64, reflect.Complex128:
		return nil, &TypeError{path, t, "complex numbers have no JSON form; use two float fields"}
	case reflect.UnsafePointer:
		return nil, &TypeError{path, t, "unsafe pointers have no JSON form"}
	case reflect.Interface:
		return &schema{}, nil
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		if inf.active[t] {
			return nil, &TypeError{path, t, "recursive types are not supported; cut the cycle, for example with a json.RawMessage field"}
		}
	}
	if t.Kind() != reflect.Pointer {
		if s, ok := custom(t); ok {
			return s, nil
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schema{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		zero := int64(0)
		return &schema{Type: "integer", Minimum: &zero}, nil
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}, nil
	case reflect.String:
		return &schema{Type: "string"}, nil
	}

	inf.active[t] = true
	defer delete(inf.active, t)
	switch t.Kind() {
	case reflect.Pointer:
		return inf.infer(t.Elem(), path)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			p := reflect.PointerTo(t.Elem())
			if !p.Implements(jsonMarshalerType) && !p.Implements(textMarshalerType) {
				// encoding/json writes []byte as a base64 string.
				return &schema{Type: "string", ContentEncoding: "base64"}, nil
			}
		}
		items, err := inf.infer(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &schema{Type: "array", Items: items}, nil
	case reflect.Array:
		items, err := inf.infer(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		n := t.Len()
		return &schema{Type: "array", Items: items, MaxItems: &n}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, &TypeError{path, t, "map keys must be strings"}
		}
		values, err := inf.infer(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &schema{Type: "object", Additional: values}, nil
	default: // reflect.Struct
		return inf.object(t, path)
	}
}

// object infers the schema of struct type t: one property per field that
// encoding/json would use, required unless omitempty or omitzero, no others.
func (inf *inferrer) object(t reflect.Type, path string) (*schema, error) {
	s := &schema{Type: "object", hasProperties: true, Properties: []property{}, Additional: noAdditional}
	for _, f := range jsonFields(t) {
		fpath := f.goPath
		if path != "" {
			fpath = path + "." + f.goPath
		}
		fs, err := inf.infer(f.typ, fpath)
		if err != nil {
			return nil, err
		}
		if f.quoted {
			// The ",string" option carries a scalar inside a JSON string.
			fs = &schema{Type: "string"}
		}
		if d, ok := f.tag.Lookup("description"); ok {
			fs.Description = d
		}
		if e, ok := f.tag.Lookup("enum"); ok {
			if err := setEnum(fs, e); err != nil {
				return nil, &TypeError{fpath, f.typ, err.Error()}
			}
		}
		s.Properties = append(s.Properties, property{Name: f.name, Schema: fs})
		if !f.omit {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// setEnum applies an `enum:"a,b,c"` tag to a string schema, or to the items
// of an array of strings.
func setEnum(s *schema, tag string) error {
	target := s
	if s.Type == "array" && s.Items != nil {
		target = s.Items
	}
	if target.Type != "string" || target.Format != "" || target.ContentEncoding != "" {
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
	target.Enum = values
	return nil
}

// field is one struct field as encoding/json sees it.
type field struct {
	name   string // JSON name
	goPath string // Go selector from the struct, "Base.ID" for promoted fields
	index  []int  // field index sequence, for ordering
	tagged bool   // name came from a json tag
	omit   bool   // omitempty or omitzero
	quoted bool   // ",string" on a scalar
	typ    reflect.Type
	tag    reflect.StructTag
}

// jsonFields lists the fields encoding/json encodes and decodes for struct
// type t, in field order: exported fields and the fields promoted from
// embedded structs, named by their json tags, with the same rules for name
// conflicts (the shallowest field wins, then the only tagged one, else none).
func jsonFields(t reflect.Type) []field {
	type embedded struct {
		typ    reflect.Type
		index  []int
		goPath string
	}
	var all []field
	visited := map[reflect.Type]bool{}
	next := []embedded{{typ: t}}
	for len(next) > 0 {
		current := next
		next = nil
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clone(e.index), i)
				goPath := sf.Name
				if e.goPath != "" {
					goPath = e.goPath + "." + sf.Name
				}
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, embedded{ft, index, goPath})
					continue
				}
				f := field{name: name, goPath: goPath, index: index, tagged: name != "", typ: sf.Type, tag: sf.Tag}
				if f.name == "" {
					f.name = sf.Name
				}
				for opt := range strings.SplitSeq(opts, ",") {
					switch opt {
					case "omitempty", "omitzero":
						f.omit = true
					case "string":
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							f.quoted = true
						}
					}
				}
				all = append(all, f)
			}
		}
		// Types are marked after the whole level, so a struct embedded twice
		// at one depth yields its fields twice and they cancel out below, as
		// in encoding/json.
		for _, e := range current {
			visited[e.typ] = true
		}
	}

	byName := map[string][]field{}
	var names []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			names = append(names, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, name := range names {
		if f, ok := dominant(byName[name]); ok {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominant picks the field that wins among fields sharing a JSON name: the
// shallowest, or the only tagged one among the shallowest. Otherwise none.
func dominant(fs []field) (field, bool) {
	depth := len(fs[0].index)
	for _, f := range fs[1:] {
		depth = min(depth, len(f.index))
	}
	var top []field
	for _, f := range fs {
		if len(f.index) == depth {
			top = append(top, f)
		}
	}
	if len(top) == 1 {
		return top[0], true
	}
	var tagged []field
	for _, f := range top {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return field{}, false
}

// validTagName reports whether encoding/json accepts name from a json tag;
// it falls back to the Go field name otherwise.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

package section

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// simpleBody is a body template whose actions are all plain references to
// fields of the params struct ({{.Name}}, {{.Owner.Name}}) holding strings,
// booleans or numbers. Most prompt bodies are like this; they are compiled
// to a list of parts instead of going through text/template, which makes
// building a prompt of many sections several times cheaper. The output is
// the same text/template would produce.
type simpleBody struct {
	typ   reflect.Type // the params type it was compiled for
	parts []simplePart
	size  int // bytes of literal text
}

type simplePart struct {
	text  string // literal text, when field is nil
	field []int  // field indexes from the params struct, one per name
}

// simpleCache shares compiled simple bodies between sections with the same
// source and params type: programs that build their prompts per request
// compile each body once. It is bounded; when full it starts over.
var simpleCache struct {
	mu sync.Mutex // guards m
	m  map[simpleKey]*simpleBody
}

type simpleKey struct {
	typ reflect.Type
	src string
}

// maxSimpleCache bounds simpleCache.
const maxSimpleCache = 4096

// cachedSimple is compileSimple through simpleCache. A nil body (src is not
// simple) is cached too.
func cachedSimple(src string, t reflect.Type) (*simpleBody, bool) {
	key := simpleKey{t, src}
	simpleCache.mu.Lock()
	b, hit := simpleCache.m[key]
	simpleCache.mu.Unlock()
	if hit {
		return b, b != nil
	}
	b, ok := compileSimple(src, t)
	if !ok {
		b = nil
	}
	simpleCache.mu.Lock()
	if simpleCache.m == nil || len(simpleCache.m) >= maxSimpleCache {
		simpleCache.m = make(map[simpleKey]*simpleBody)
	}
	simpleCache.m[key] = b
	simpleCache.mu.Unlock()
	return b, ok
}

// compileSimple compiles src when every action in it is a plain field
// reference that t resolves without methods, pointers or embedding; ok is
// false otherwise, and the body goes to text/template.
func compileSimple(src string, t reflect.Type) (b *simpleBody, ok bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	b = &simpleBody{typ: t, parts: make([]simplePart, 0, 2*strings.Count(src, "{{")+1)}
	// Every field index of the body in one array: each name follows a dot.
	indexes := make([]int, 0, strings.Count(src, "."))
	for src != "" {
		i := strings.Index(src, "{{")
		if i < 0 {
			b.add(simplePart{text: src})
			break
		}
		if i > 0 {
			b.add(simplePart{text: src[:i]})
		}
		j := strings.Index(src[i:], "}}")
		if j < 0 {
			return nil, false
		}
		start := len(indexes)
		indexes, ok = resolveSimple(src[i+2:i+j], t, indexes)
		if !ok {
			return nil, false
		}
		b.parts = append(b.parts, simplePart{field: indexes[start:len(indexes):len(indexes)]})
		src = src[i+j+2:]
	}
	return b, true
}

func (b *simpleBody) add(p simplePart) {
	b.parts = append(b.parts, p)
	b.size += len(p.text)
}

// resolveSimple resolves an action such as " .Owner.Name " to field indexes,
// appended to index.
func resolveSimple(action string, t reflect.Type, index []int) ([]int, bool) {
	action = strings.Trim(action, " \t\r\n") // the spaces text/template allows, no others
	if len(action) < 2 || action[0] != '.' {
		return nil, false
	}
	for rest := action[1:]; ; {
		name, after, more := strings.Cut(rest, ".")
		rest = after
		if !isIdent(name) || t.Kind() != reflect.Struct || hasMethod(t, name) {
			return nil, false
		}
		f, ok := t.FieldByName(name)
		if !ok || !f.IsExported() || len(f.Index) != 1 {
			return nil, false
		}
		index = append(index, f.Index[0])
		t = f.Type
		if !more {
			break
		}
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		// A method (String, Error, ...) would change how the value prints.
		if t.NumMethod() > 0 || reflect.PointerTo(t).NumMethod() > 0 {
			return nil, false
		}
		return index, true
	}
	return nil, false
}

func hasMethod(t reflect.Type, name string) bool {
	pt := reflect.PointerTo(t)
	if pt.NumMethod() == 0 {
		return false
	}
	_, ok := pt.MethodByName(name)
	return ok
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		case i > 0 && '0' <= r && r <= '9':
		default:
			return false
		}
	}
	return true
}

// execute renders the body for params, a value of the struct type it was
// compiled for; any other value is an error, as text/template would give.
func (b *simpleBody) execute(params any) (string, error) {
	var out strings.Builder
	out.Grow(b.size + 16*len(b.parts))
	if err := b.write(&out, params); err != nil {
		return "", err
	}
	return out.String(), nil
}

// appendTo is execute appending to dst.
func (b *simpleBody) appendTo(dst []byte, params any) ([]byte, error) {
	out := appender{dst}
	err := b.write(&out, params)
	return out.b, err
}

func (b *simpleBody) write(out textWriter, params any) error {
	v := reflect.ValueOf(params)
	if !v.IsValid() || v.Type() != b.typ {
		return fmt.Errorf("body template: params are %T, want %v", params, b.typ)
	}
	for _, p := range b.parts {
		if p.field == nil {
			out.WriteString(p.text)
			continue
		}
		f := v
		for _, i := range p.field {
			f = f.Field(i)
		}
		if f.Kind() == reflect.String {
			out.WriteString(f.String())
		} else {
			fmt.Fprint(out, f.Interface())
		}
	}
	return nil
}

// textWriter is what bodies are written to: a strings.Builder or an
// appender.
type textWriter interface {
	io.Writer
	io.StringWriter
}

// appender appends what is written to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func (a *appender) WriteString(s string) (int, error) {
	a.b = append(a.b, s...)
	return len(s), nil
}

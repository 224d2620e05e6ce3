package section

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The string builtins find how long their text would be before they build
// it (fmt builds a whole text in memory before anything is written; a
// width applies to each element of a slice or a map): a bound that is
// checked only after would let a template fill memory first.

// directive is what one verb of a printf format (or print's %v) makes of
// its argument.
type directive struct {
	verb               rune
	width, prec        int // prec -1: none
	plus, sharp, space bool
	arg                int  // the argument it formats; -1 for none
	bad                bool // printed as fmt prints an argument left over
}

// parseFormat reads format as fmt.Sprintf does, giving each verb, with
// the argument it formats, to each. Widths and precisions are bounded by
// maxWidth, those given in the format and those taken from an argument
// ('*').
func parseFormat(format string, args []any, each func(directive)) error {
	argNum := 0
	// index reads an argument index ("[n]") at format[i:].
	index := func(i int) int {
		if i >= len(format) || format[i] != '[' {
			return i
		}
		j := strings.IndexByte(format[i:], ']')
		if j < 0 {
			return i
		}
		if n, err := strconv.Atoi(format[i+1 : i+j]); err == nil && n >= 1 && n <= len(args) {
			argNum = n - 1
		}
		return i + j + 1
	}
	// number reads a number, or takes one from an argument ('*').
	number := func(i int) (int, int, error) {
		if i < len(format) && format[i] == '*' {
			n := 0
			if argNum < len(args) {
				v := reflect.ValueOf(args[argNum])
				switch {
				case v.CanInt():
					n = int(max(min(v.Int(), maxWidth+1), -maxWidth-1))
				case v.CanUint():
					n = int(min(v.Uint(), maxWidth+1))
				}
				if n > maxWidth || n < -maxWidth {
					return 0, 0, fmt.Errorf("printf: the argument %v is a width or precision ('*'), more than the %d a format may give", args[argNum], maxWidth)
				}
				argNum++
			}
			return max(n, -n), i + 1, nil
		}
		j := i
		for j < len(format) && '0' <= format[j] && format[j] <= '9' {
			j++
		}
		digits := strings.TrimLeft(format[i:j], "0")
		n, err := strconv.Atoi(digits)
		if digits == "" {
			n, err = 0, nil
		}
		if err != nil || n > maxWidth {
			return 0, 0, fmt.Errorf("printf: the width or precision %s is more than the %d a format may give", digits, maxWidth)
		}
		i = j
		return n, i, nil
	}
	for i := 0; i < len(format); {
		if format[i] != '%' {
			i++
			continue
		}
		d := directive{prec: -1}
		for i++; i < len(format) && strings.IndexByte("#0+- ", format[i]) >= 0; i++ {
			d.sharp = d.sharp || format[i] == '#'
			d.plus = d.plus || format[i] == '+'
			d.space = d.space || format[i] == ' '
		}
		var err error
		i = index(i)
		if d.width, i, err = number(i); err != nil {
			return err
		}
		if i < len(format) && format[i] == '.' {
			i = index(i + 1)
			if d.prec, i, err = number(i); err != nil {
				return err
			}
		}
		i = index(i)
		if i >= len(format) {
			break
		}
		var size int
		d.verb, size = utf8.DecodeRuneInString(format[i:])
		i += size
		d.arg = -1
		if d.verb != '%' {
			d.arg = argNum
			argNum++
		}
		each(d)
	}
	return nil
}

// sizer adds up how long fmt would make the text of values: within a few
// times of the length, and never much less, so that a text refused is
// never built and one allowed is at most a few times the bound.
type sizer struct {
	limit int // the walk stops past it
	n     int // bytes of text so far
	read  int // bytes read so far
}

// check refuses a text past the limit, before it is built.
func (z *sizer) check(name string) error {
	if z.n > z.limit {
		return fmt.Errorf("%s: its result would be more than the %d bytes a body may hold", name, z.limit)
	}
	return nil
}

// charge charges w for the text made, once built, and what was read to
// make it: the size guessed before may be many times the text (a %f).
func (z *sizer) charge(name string, w *Work, made string) (string, error) {
	if err := w.move(z.read + len(made)); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return made, nil
}

var (
	stringerType  = reflect.TypeFor[fmt.Stringer]()
	formatterType = reflect.TypeFor[fmt.Formatter]()
	errorType     = reflect.TypeFor[error]()
)

// add adds v formatted by d, as fmt formats an argument.
func (z *sizer) add(d directive, v reflect.Value) { z.value(d, v, 0) }

func (z *sizer) value(d directive, v reflect.Value, depth int) {
	if z.n > z.limit {
		return
	}
	if !v.IsValid() {
		z.leaf(d, len("<nil>"))
		return
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Chan, reflect.Func:
		if t := v.Type(); t.Implements(stringerType) || t.Implements(formatterType) || t.Implements(errorType) {
			// Go code of the caller's: what it returns is checked once built.
			z.leaf(d, 64)
			return
		}
	}
	if d.sharp {
		z.n += len(v.Type().String())
	}
	switch v.Kind() {
	case reflect.Interface:
		z.value(d, v.Elem(), depth+1)
	case reflect.Bool:
		z.leaf(d, len("false"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		z.leaf(d, intSize(d, max(v.Int(), -v.Int()-1)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		z.leaf(d, intSize(d, int64(min(v.Uint(), 1<<63-1))))
	case reflect.Float32, reflect.Float64:
		z.leaf(d, floatSize(d))
	case reflect.Complex64, reflect.Complex128:
		z.leaf(d, 2*floatSize(d)+3)
	case reflect.String:
		z.text(d, v.String())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 && strings.ContainsRune("sqxX", d.verb) {
			z.text(d, string(v.Bytes()))
			return
		}
		z.n += 2
		for i := 0; i < v.Len() && z.n <= z.limit; i++ {
			z.value(d, v.Index(i), depth+1)
			z.n++
		}
	case reflect.Map:
		z.n += len("map[]")
		for it := v.MapRange(); it.Next() && z.n <= z.limit; {
			z.value(d, it.Key(), depth+1)
			z.value(d, it.Value(), depth+1)
			z.n += 2
		}
	case reflect.Struct:
		z.n += 2
		for i := 0; i < v.NumField() && z.n <= z.limit; i++ {
			z.n += len(v.Type().Field(i).Name) + 2
			z.value(d, v.Field(i), depth+1)
		}
	case reflect.Pointer:
		if depth == 0 && !v.IsNil() {
			switch v.Elem().Kind() {
			case reflect.Array, reflect.Slice, reflect.Struct, reflect.Map:
				z.n++
				z.value(d, v.Elem(), depth+1)
				return
			}
		}
		z.leaf(d, 20)
	default:
		z.leaf(d, 20)
	}
}

// leaf adds a value of base bytes, padded to the width; a precision may
// add as many digits.
func (z *sizer) leaf(d directive, base int) {
	n := base + max(d.prec, 0)
	if d.bad {
		n += 24 // the type's name and the punctuation around
	}
	z.n += max(n, d.width)
	z.read++
}

// text adds a string.
func (z *sizer) text(d directive, s string) {
	if d.prec >= 0 && d.prec < len(s) {
		s = s[:d.prec] // the precision counts runes: at most as many bytes
	}
	z.read += len(s)
	var n int
	switch {
	case d.verb == 'q' || d.verb == 'v' && d.sharp:
		n = quoteSize(s, d.plus)
	case d.verb == 'x' || d.verb == 'X':
		n = 2*len(s) + 2
		if d.space {
			n = 5*len(s) + 2 // "0x41 0x42": prefix and space for each byte
		}
	case d.verb == 's' || d.verb == 'v':
		n = len(s)
	default: // %!d(string=...)
		n = len(s) + 24
	}
	if d.bad {
		n += 24
	}
	z.n += max(n, d.width)
}

// intSize is the length of an integer of magnitude m written by d.
func intSize(d directive, m int64) int {
	switch d.verb {
	case 'b':
		return 66
	case 'o', 'O':
		return 25
	case 'x', 'X':
		return 19
	case 'U', 'c', 'q':
		return 16
	}
	n := 2 // a sign, and room
	for ; m >= 10; m /= 10 {
		n++
	}
	return n
}

// floatSize is the length of a float written by d, less the digits a
// precision adds.
func floatSize(d directive) int {
	if d.verb == 'f' || d.verb == 'F' {
		return 330 // 1e308 has 309 digits
	}
	return 32
}

// quoteSize bounds the length of s quoted by %q (ASCII only with plus).
func quoteSize(s string, ascii bool) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c >= '\a' && c <= '\r':
				n += 2
			case c < ' ' || c == 0x7f:
				n += 4
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 4 // \x80
		case !ascii && strconv.IsPrint(r):
			n += size
		case r < 0x10000:
			n += 6 // \u2028
		default:
			n += 10 // \U0001f600
		}
		i += size
	}
	return n
}

// htmlSize bounds the length of s escaped by html.
func htmlSize(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'', '&':
			n += 5 // &#34; &#39; &amp;
		case '<', '>':
			n += 4
		case 0:
			n += 3 // U+FFFD
		default:
			n++
		}
	}
	return n
}

// jsSize bounds the length of s escaped by js.
func jsSize(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'' || c == '"':
			n += 2
		case c == '<' || c == '>' || c == '&' || c == '=' || c < ' ':
			n += 6 // \u003C
		case c >= utf8.RuneSelf:
			n += 3 // a rune that is not printable, \uXXXX, is at least 2 bytes
		default:
			n++
		}
	}
	return n
}

// urlquerySize bounds the length of s escaped by urlquery.
func urlquerySize(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-_.~ ", c) >= 0:
			n++
		default:
			n += 3
		}
	}
	return n
}

package section

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"text/template"
)

// fieldFailure matches text/template's failure to read a field of a value
// that has no fields: the expression, then the field. It is compiled on
// first use, so that loading the package costs nothing.
var fieldFailure = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`at <(\.[\pL\pN_.]+)>: can't evaluate field ([\pL\pN_]+) in type`)
})

// paramError is a template's failure to read a key of a param that is no
// object, said in terms of the params.
type paramError struct {
	msg string
	err error // text/template's
}

func (e *paramError) Error() string { return e.msg }
func (e *paramError) Unwrap() error { return e.err }

// explainField rewrites err, a template's failure with params as its dot,
// when it is text/template's "can't evaluate field x in type interface {}"
// (the template reads .n.x, and the param n is a string): the error then
// names the param, what it is, and what the template wanted of it.
// Other errors are returned as they are.
func explainField(err error, params any) error {
	err = explainCompare(err)
	var ee template.ExecError
	if !errors.As(err, &ee) {
		return err
	}
	m := fieldFailure().FindStringSubmatch(ee.Error())
	if m == nil {
		return err
	}
	expr, field := m[1], m[2]
	v := reflect.ValueOf(params)
	names := strings.Split(expr[1:], ".")
	for i, name := range names {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		var next reflect.Value
		switch {
		case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
			next = v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key()))
		case v.Kind() == reflect.Struct:
			next = v.FieldByName(name)
		}
		if next.IsValid() {
			v = next
			continue
		}
		if name != field || i == 0 {
			return err
		}
		param := strings.Join(names[:i], ".")
		return &paramError{err: err, msg: fmt.Sprintf("%s: param %q is %s, not an object: it has no key %q; give %q as a JSON object with %q",
			expr, param, kind(v), field, param, field)}
	}
	return err
}

// kind names what a param is, in JSON's terms when it is a JSON value.
func kind(v reflect.Value) string {
	if !v.IsValid() {
		return "null"
	}
	if _, ok := v.Interface().(json.Number); ok {
		return "a number"
	}
	switch v.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + v.Type().String()
}

// comparison matches a comparison's failure with values of two types
// that do not compare (numbers compare with numbers whatever their types).
var comparison = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`error calling (?:eq|ne|lt|le|gt|ge): incompatible types for comparison: \S+ and \S+`)
})

// explainCompare adds what to do to a comparison of values of two types
// (a string param and a number). Other errors are returned as they are.
func explainCompare(err error) error {
	var ee template.ExecError
	if err == nil || !errors.As(err, &ee) || !comparison().MatchString(err.Error()) {
		return err
	}
	return &paramError{err: err, msg: err.Error() + "; compare values of one type: a number with a number, a string with a string (\"3\" with 3 does not compare)"}
}

// missingParam adds what to do to text/template's failure to find a key
// of the params, as the prompt file's messages do for bodies.
func missingParam(err error) error {
	if err != nil && strings.Contains(err.Error(), "map has no entry for key") {
		return &paramError{err: err, msg: err.Error() + "; give it in the params"}
	}
	return err
}

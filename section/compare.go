package section

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
)

// The comparisons (eq, ne, lt, le, gt, ge) are text/template's, with two
// changes: numbers compare as numbers whatever their types (params from
// JSON give 7.5 as a float64, a template writes 3, an int), and the bytes
// of the strings compared are charged to the render's Work, as a loop that
// compares two strings of 16 MiB at every step would otherwise run for an
// hour.

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errNoComparison      = errors.New("missing argument for comparison")
)

// kindOf sorts a value for comparison: by kind, the numbers together.
type cmpKind int

const (
	otherKind cmpKind = iota
	boolKind
	complexKind
	numberKind
	stringKind
)

func kindOf(v reflect.Value) cmpKind {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return numberKind
	case reflect.Complex64, reflect.Complex128:
		return complexKind
	case reflect.String:
		return stringKind
	}
	return otherKind
}

// elem is what an interface holds, or the zero Value for a nil one.
func elem(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Interface {
		return v
	}
	if v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

// compareNumbers compares two numbers of any types: -1, 0 or 1; unordered
// when one is NaN.
func compareNumbers(a, b reflect.Value) (c int, unordered bool) {
	switch {
	case a.CanInt() && b.CanInt():
		return cmp.Compare(a.Int(), b.Int()), false
	case a.CanUint() && b.CanUint():
		return cmp.Compare(a.Uint(), b.Uint()), false
	case a.CanInt() && b.CanUint():
		if a.Int() < 0 {
			return -1, false
		}
		return cmp.Compare(uint64(a.Int()), b.Uint()), false
	case a.CanUint() && b.CanInt():
		c, _ := compareNumbers(b, a)
		return -c, false
	}
	x, y := float(a), float(b)
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, true
	}
	if a.CanFloat() != b.CanFloat() {
		// An integer against a float, exactly: a float64 holds no odd
		// integer past 2^53.
		return exact(a).Cmp(exact(b)), false
	}
	return cmp.Compare(x, y), false
}

// exact is a number as a big.Float, without rounding.
func exact(v reflect.Value) *big.Float {
	switch {
	case v.CanInt():
		return new(big.Float).SetInt64(v.Int())
	case v.CanUint():
		return new(big.Float).SetUint64(v.Uint())
	}
	return new(big.Float).SetFloat64(v.Float())
}

func float(v reflect.Value) float64 {
	switch {
	case v.CanInt():
		return float64(v.Int())
	case v.CanUint():
		return float64(v.Uint())
	}
	return v.Float()
}

func incompatible(a, b reflect.Value) error {
	return fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
}

// eq reports whether a equals one of bs.
func (w *Work) eq(a reflect.Value, bs ...reflect.Value) (bool, error) {
	a = elem(a)
	if len(bs) == 0 {
		return false, errNoComparison
	}
	ka := kindOf(a)
	for _, b := range bs {
		b = elem(b)
		kb := kindOf(b)
		truth := false
		switch {
		case ka != kb:
			if a.IsValid() && b.IsValid() {
				return false, incompatible(a, b)
			}
		case ka == numberKind:
			c, unordered := compareNumbers(a, b)
			truth = c == 0 && !unordered
		case ka == boolKind:
			truth = a.Bool() == b.Bool()
		case ka == complexKind:
			truth = a.Complex() == b.Complex()
		case ka == stringKind:
			if a.Len() == b.Len() {
				if err := w.move(a.Len()); err != nil {
					return false, err
				}
			}
			truth = a.String() == b.String()
		default:
			var err error
			if truth, err = equalOther(a, b); err != nil {
				return false, err
			}
		}
		if truth {
			return true, nil
		}
	}
	return false, nil
}

// equalOther compares values that are not numbers, strings, booleans or
// complex numbers, as text/template does: nil with nil, comparable
// values with ==.
func equalOther(a, b reflect.Value) (bool, error) {
	if a.Kind() != b.Kind() && a.IsValid() && b.IsValid() {
		return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", a, a.Type(), b.Type(), b)
	}
	if isNil(a) || isNil(b) {
		return isNil(a) == isNil(b), nil
	}
	if !b.Type().Comparable() {
		return false, fmt.Errorf("non-comparable type %s: %v", b, b.Type())
	}
	return a.Interface() == b.Interface(), nil
}

// isNil reports whether v is the zero Value, or nil of its type.
func isNil(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// lt reports whether a is less than b.
func (w *Work) lt(a, b reflect.Value) (bool, error) {
	a, b = elem(a), elem(b)
	ka, kb := kindOf(a), kindOf(b)
	if ka == otherKind || kb == otherKind {
		return false, errBadComparisonType
	}
	switch {
	case ka != kb:
		return false, incompatible(a, b)
	case ka == numberKind:
		c, unordered := compareNumbers(a, b)
		return c < 0 && !unordered, nil
	case ka == stringKind:
		if err := w.move(min(a.Len(), b.Len())); err != nil {
			return false, err
		}
		return a.String() < b.String(), nil
	}
	return false, errBadComparisonType
}

func (w *Work) ne(a, b reflect.Value) (bool, error) {
	equal, err := w.eq(a, b)
	return !equal, err
}

func (w *Work) le(a, b reflect.Value) (bool, error) {
	less, err := w.lt(a, b)
	if less || err != nil {
		return less, err
	}
	return w.eq(a, b)
}

func (w *Work) gt(a, b reflect.Value) (bool, error) {
	le, err := w.le(a, b)
	if err != nil {
		return false, err
	}
	return !le, nil
}

func (w *Work) ge(a, b reflect.Value) (bool, error) {
	less, err := w.lt(a, b)
	if err != nil {
		return false, err
	}
	return !less, nil
}

package term

import (
	"slices"
	"strings"
	"testing"
)

func TestEnviron(t *testing.T) {
	t.Setenv("UNFOLD_TEST_KEEP", "1")
	t.Setenv("UNFOLD_TEST_DROP", "1")
	t.Setenv("PAGER", "less")
	env := Environ(func(k string) bool { return k == "UNFOLD_TEST_DROP" }, []string{"PAGER=more", "EXTRA=x"})
	get := func(k string) []string {
		var vs []string
		for _, kv := range env {
			if key, v, _ := strings.Cut(kv, "="); key == k {
				vs = append(vs, v)
			}
		}
		return vs
	}
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"UNFOLD_TEST_KEEP", []string{"1"}},
		{"UNFOLD_TEST_DROP", nil},
		{"PAGER", []string{"more"}}, // inherited, then quiet, then extra: the last wins, once
		{"TERM", []string{"dumb"}},
		{"EXTRA", []string{"x"}},
	} {
		if got := get(tc.key); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.key, got, tc.want)
		}
	}
}

package cmdline

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"sqlite3", []string{"sqlite3"}},
		{"  gdb  -q   ./prog ", []string{"gdb", "-q", "./prog"}},
		{`psql -c 'select 1' "my db"`, []string{"psql", "-c", "select 1", "my db"}},
		{`a\ b "q\"x" 'it''s'`, []string{"a b", `q"x`, "its"}},
		{`x ""`, []string{"x", ""}},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := Split(c.in)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("got %q, %v, want %q", got, err, c.want)
			}
		})
	}
}

package jsonpos_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/internal/jsonpos"
)

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\n  \"a\": 1,\n  x\n}", "invalid character 'x' looking for beginning of object key string (line 3, column 3)"},
		{`{"a": 1`, "ends"},
		{`{"a": "s"}`, "json: cannot unmarshal string into Go struct field .A of type int (line 1, column 9)"},
	} {
		var v struct{ A int }
		err := json.NewDecoder(strings.NewReader(c.in)).Decode(&v)
		if got := jsonpos.Describe([]byte(c.in), err, "ends"); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

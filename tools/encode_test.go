package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	schema "github.com/google/jsonschema-go/jsonschema"
)

// TestEncodeKeepsEveryKeyword checks that encode writes every keyword of the
// schemas jsonschema-go infers: read back, its JSON is the schema inferred.
func TestEncodeKeepsEveryKeyword(t *testing.T) {
	type described struct {
		When  []string          `json:"when" description:"<times> & dates"`
		Sizes map[string][4]int `json:"sizes,omitempty"`
		Empty struct{}          `json:"empty"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[guardIn](),
		reflect.TypeFor[described](),
		reflect.TypeFor[*[]int32](),
		reflect.TypeFor[any](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			s, err := infer(typ)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := encode(s)
			if err != nil {
				t.Fatal(err)
			}
			var back schema.Schema
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatalf("read back %s: %v", raw, err)
			}
			// jsonschema-go's JSON of each, read as plain values, so that
			// neither key order nor property order counts.
			plain := func(s *schema.Schema) any {
				b, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				var v any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			if got, want := plain(&back), plain(s); !reflect.DeepEqual(got, want) {
				t.Errorf("encode wrote %s\nread back: %v\nwant: %v", raw, got, want)
			}
		})
	}
}

package tools

import (
	"context"
	"testing"
)

// BenchmarkInfer measures what the schema cache saves a tool made again:
// inferring, encoding and compiling the schemas of its input and output
// types, for a small input and for one with every kind of field.
func BenchmarkInfer(b *testing.B) {
	type small struct {
		Path  string `json:"path"`
		Line  int    `json:"line"`
		Count int    `json:"count,omitempty"`
	}
	for _, c := range []struct {
		name string
		new  func() (*Tool, error)
	}{
		{"small", func() (*Tool, error) {
			return New("read", "Read lines.", func(context.Context, Context, small) (int, error) { return 0, nil })
		}},
		{"rich", func() (*Tool, error) {
			return New("rich", "Every kind of field.", func(context.Context, Context, guardIn) (guardIn, error) { return guardIn{}, nil })
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				schemaCache.Clear()
				if _, err := c.new(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

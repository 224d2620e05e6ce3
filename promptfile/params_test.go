package promptfile_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/promptfile"
)

// deepParams returns params whose values sit under long paths: a key of
// a megabyte over an array of 300 numbers, and 300 numbers in arrays
// nested 5,000 deep.
func deepParams() map[string][]byte {
	return map[string][]byte{
		"long key": []byte(`{"` + strings.Repeat("k", 1<<20) + `":[` + strings.Repeat("0,", 299) + `0]}`),
		"deep":     []byte(`{"a":` + strings.Repeat("[", 5000) + strings.Repeat("0,", 299) + "0" + strings.Repeat("]", 5000) + `}`),
	}
}

// TestParamsLongPaths decodes params whose values sit under long paths:
// the work does not grow with the paths' length (the path of every value
// was written out, for an error it might have, taking hours for a 4 MB key
// over an array), so it allocates a few times the input, not hundreds of
// megabytes.
func TestParamsLongPaths(t *testing.T) {
	for name, data := range deepParams() {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			p, err := promptfile.DecodeParams(data)
			runtime.ReadMemStats(&after)
			if err != nil || len(p) != 1 {
				t.Fatalf("got %v, %v", p, err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Errorf("decoding %d bytes allocated %d MiB, want at most 32", len(data), grew>>20)
			}
		})
	}
}

// BenchmarkDecodeParams decodes params whose values sit under long paths
// (see deepParams), and a flat object of as many values.
func BenchmarkDecodeParams(b *testing.B) {
	inputs := deepParams()
	inputs["flat"] = []byte(`{"a":[` + strings.Repeat("0,", 299) + `0]}`)
	for _, name := range []string{"flat", "long key", "deep"} {
		data := inputs[name]
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := promptfile.DecodeParams(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

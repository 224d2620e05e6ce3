package python

import (
	"context"
	"slices"
	"testing"
	"time"
)

// varied defines 100 variables of assorted types.
const varied = `import collections, fractions, decimal
class Model:
    pass
for i in range(100):
    kind = i % 10
    globals()['v%03d' % i] = [i, float(i), str(i), [i], {i: i}, (i,), {i}, Model(),
        collections.OrderedDict(), fractions.Fraction(i, 7)][kind]
del i, kind`

// BenchmarkRoundTrip measures one command through the interpreter, alone
// and followed by the screen, and reports the median and 99th percentile of
// the per-command times (run with -benchtime=1000x for 1,000 commands).
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name   string
		setup  string
		code   string
		screen bool
	}{
		{"pass", "", "pass", false},
		{"assign+screen", "", "x = 1", true},
		{"assign+screen/100vars", varied, "x = 1", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := newREPL(b)
			ctx := context.Background()
			// The first command starts the interpreter; it is not measured.
			if resp := execute(b, r, "pass\n"+bc.setup); !resp.Success {
				b.Fatalf("setup: %s", resp.Output)
			}
			var times []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				resp, err := r.Execute(ctx, bc.code)
				if err != nil || !resp.Success {
					b.Fatalf("Execute(%q): %v %q", bc.code, err, resp.Output)
				}
				if bc.screen {
					if _, err := r.Screen(); err != nil {
						b.Fatal(err)
					}
				}
				times = append(times, time.Since(start))
			}
			reportPercentiles(b, times)
		})
	}
}

// BenchmarkScreen measures building the screen with 100 variables of
// varied types listed.
func BenchmarkScreen(b *testing.B) {
	r := newREPL(b)
	if resp := execute(b, r, varied); !resp.Success {
		b.Fatalf("setup: %s", resp.Output)
	}
	if sc, _ := r.Screen(); len(r.vars) != MaxVariables {
		b.Fatalf("screen lists %d variables, want %d:\n%s", len(r.vars), MaxVariables, sc.Content)
	}
	var times []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := r.Screen(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	reportPercentiles(b, times)
}

// reportPercentiles reports the median and 99th percentile of times in
// microseconds.
func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	at := func(q float64) float64 {
		return float64(times[min(len(times)-1, int(q*float64(len(times))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.5), "median-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

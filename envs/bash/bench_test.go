//go:build linux

package bash_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/internal/ptyfloor"
)

// pexpectRoundTrip is what a pexpect driver measured per round trip of
// `true` on this kind of machine (bench/RESULTS.md measures it side by side).
const pexpectRoundTrip = 300 * time.Microsecond

// startFloor starts name on a pty (see ptyfloor) for the benchmark's
// floors, ended when the benchmark ends.
func startFloor(b *testing.B, spin time.Duration, env []string, name string, args ...string) *ptyfloor.Term {
	b.Helper()
	t, err := ptyfloor.Start(spin, env, name, args...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(t.Close)
	return t
}

// roundTrip writes line to t and reads until want has arrived.
func roundTrip(b *testing.B, t *ptyfloor.Term, line, want []byte) {
	if err := t.RoundTrip(line, want); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRoundTrip measures `true` through the environment (marker,
// state, screen bookkeeping) next to three floors, interleaved so machine
// load hits all of them alike: a bare bash on a pty with a minimal marker
// prompt, the same read as the environment reads (busy-waiting for the
// reply for DefaultSpin), and a pty running cat. Run it with
// -benchtime=2000x for 2,000 commands each. It reports medians and p99s in
// microseconds, the ratios of the environment's median to the bare-bash
// floors, and how many times faster than a pexpect driver
// (0.3 ms) the median is.
func BenchmarkRoundTrip(b *testing.B) {
	s, err := bash.New(bash.WithDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	marker := []byte("\x1eM\x1f")
	bareEnv := []string{"PS1=\x1eM\x1f", "TERM=dumb", "PATH=" + os.Getenv("PATH")}
	bashArgs := []string{"--norc", "--noprofile", "--noediting", "-i"}
	bare := startFloor(b, 0, bareEnv, "bash", bashArgs...)
	spun := startFloor(b, bash.DefaultSpin, bareEnv, "bash", bashArgs...)
	for _, t := range []*ptyfloor.Term{bare, spun} {
		if err := t.Until(marker); err != nil {
			b.Fatal(err)
		}
	}
	cat := startFloor(b, 0, nil, "cat")
	ctx := context.Background()
	var ours, bareT, spunT, catT []time.Duration
	for b.Loop() {
		t0 := time.Now()
		resp, err := s.Execute(ctx, "true")
		t1 := time.Now()
		if err != nil || !resp.Success {
			b.Fatalf("Execute(true): %+v, %v", resp, err)
		}
		roundTrip(b, bare, []byte("true\n"), marker)
		t2 := time.Now()
		roundTrip(b, spun, []byte("true\n"), marker)
		t3 := time.Now()
		roundTrip(b, cat, []byte("x\n"), []byte("x\n"))
		t4 := time.Now()
		ours, bareT = append(ours, t1.Sub(t0)), append(bareT, t2.Sub(t1))
		spunT, catT = append(spunT, t3.Sub(t2)), append(catT, t4.Sub(t3))
	}
	med, p99 := stats(ours)
	bmed, bp99 := stats(bareT)
	smed, sp99 := stats(spunT)
	cmed, cp99 := stats(catT)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(med), "median-us")
	b.ReportMetric(us(p99), "p99-us")
	b.ReportMetric(us(bmed), "bare-bash-median-us")
	b.ReportMetric(us(bp99), "bare-bash-p99-us")
	b.ReportMetric(us(smed), "spinning-bare-bash-median-us")
	b.ReportMetric(us(sp99), "spinning-bare-bash-p99-us")
	b.ReportMetric(us(cmed), "pty-cat-median-us")
	b.ReportMetric(us(cp99), "pty-cat-p99-us")
	b.ReportMetric(float64(med)/float64(bmed), "x-bare-bash")
	b.ReportMetric(float64(med)/float64(smed), "x-spinning-bare-bash")
	b.ReportMetric(float64(pexpectRoundTrip)/float64(med), "faster-than-pexpect")
}

// stats returns the median and the 99th percentile of ds.
func stats(ds []time.Duration) (median, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// BenchmarkFilter measures turning terminal output into text.
func BenchmarkFilter(b *testing.B) {
	s, err := bash.New(bash.WithDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(10 << 20)
	for b.Loop() {
		resp, err := s.Execute(context.Background(), "head -c 10485760 /dev/zero | tr '\\0' 'y'")
		if err != nil || !resp.Success {
			b.Fatal(resp, err)
		}
	}
}

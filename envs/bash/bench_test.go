//go:build linux

package bash_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
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

// idleSeconds is how long each round of BenchmarkIdle leaves the shell
// idle: UNFOLD_IDLE_SECONDS, or 1.
func idleSeconds() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("UNFOLD_IDLE_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Second
}

// cpuTime returns the processor time this process and process pid have
// used.
func cpuTime(b *testing.B, pid int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) + time.Duration(utime+stime)*tick
}

// BenchmarkIdle measures the processor time an idle shell costs, this
// process and bash together, per second idle (cpu-ms/s): with no command
// ("no command"); with a silent command that a call waits for, watching
// for new output, for input and for the shell's end ("watched"); and with
// a silent command left running after its call gave control back, which
// nothing watches ("detached"). Each round is idle for UNFOLD_IDLE_SECONDS
// (default 1).
func BenchmarkIdle(b *testing.B) {
	idle := idleSeconds()
	for _, c := range []string{"no command", "watched", "detached"} {
		b.Run(c, func(b *testing.B) {
			s, err := bash.New(bash.WithDir(b.TempDir()))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			resp, err := s.Execute(ctx, "echo $$")
			if err != nil {
				b.Fatal(err)
			}
			pid, err := strconv.Atoi(resp.Output)
			if err != nil {
				b.Fatalf("shell pid: %q", resp.Output)
			}
			var used time.Duration
			for b.Loop() {
				secs := strconv.Itoa(int(idle / time.Second))
				before := cpuTime(b, pid)
				switch c {
				case "no command":
					time.Sleep(idle)
				case "watched":
					resp, err = s.ExecuteLimited(ctx, "sleep "+secs, envs.Limits{Quiet: -1, Until: time.Now().Add(idle + time.Minute)})
				case "detached":
					if resp, err = s.ExecuteLimited(ctx, "sleep "+secs, envs.Limits{Until: time.Now().Add(10 * time.Millisecond)}); err == nil && resp.Running {
						time.Sleep(idle)
						resp, err = s.ExecuteLimited(ctx, "", envs.Limits{Quiet: -1})
					}
				}
				used += cpuTime(b, pid) - before
				if err != nil || c != "no command" && !resp.Success {
					b.Fatalf("%s: %+v, %v", c, resp, err)
				}
			}
			b.ReportMetric(float64(used)/float64(time.Millisecond)/(idle.Seconds()*float64(b.N)), "cpu-ms/s")
		})
	}
}

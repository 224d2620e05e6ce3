//go:build linux

package bash_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"

	"github.com/unfold-dev/unfold/envs/bash"
)

// pexpectRoundTrip is what the seed's pexpect design measured per round
// trip of `true` on this kind of machine (ENVIRONMENT-NOTES.md).
const pexpectRoundTrip = 300 * time.Microsecond

// rawTerm is a program on a pty read with plain blocking reads: the floors
// the environment is compared with.
type rawTerm struct {
	cmd    *exec.Cmd
	master *os.File
	buf    []byte
}

func startRaw(b *testing.B, name string, env []string, args ...string) *rawTerm {
	b.Helper()
	m, s, err := pty.Open()
	if err != nil {
		b.Fatal(err)
	}
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		b.Fatal(e)
	}
	t.Lflag &^= syscall.ECHO
	t.Oflag &^= syscall.OPOST
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TCSETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		b.Fatal(e)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s.Close()
	r := &rawTerm{cmd: cmd, master: m, buf: make([]byte, 0, 4096)}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		m.Close()
	})
	return r
}

// roundTrip writes line and reads until want has arrived.
func (r *rawTerm) roundTrip(b *testing.B, line, want []byte) {
	if _, err := r.master.Write(line); err != nil {
		b.Fatal(err)
	}
	r.until(b, want)
}

func (r *rawTerm) until(b *testing.B, want []byte) {
	r.buf = r.buf[:0]
	chunk := make([]byte, 4096)
	for !bytes.Contains(r.buf, want) {
		n, err := r.master.Read(chunk)
		if err != nil {
			b.Fatal(err)
		}
		r.buf = append(r.buf, chunk[:n]...)
	}
}

// BenchmarkRoundTrip measures `true` through the environment (marker,
// state, screen bookkeeping) next to two floors, interleaved so machine
// load hits all three alike: a bare bash on a pty with a minimal marker
// prompt, and a pty running cat. Run it with -benchtime=2000x for 2,000
// commands each. It reports medians and p99s in microseconds, the ratio of
// the environment's median to the bare-bash floor, and how many times
// faster than the seed's pexpect design (0.3 ms) the median is.
func BenchmarkRoundTrip(b *testing.B) {
	s, err := bash.New(bash.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	marker := []byte("\x1eM\x1f")
	bare := startRaw(b, "bash", []string{"PS1=\x1eM\x1f", "TERM=dumb", "PATH=" + os.Getenv("PATH")}, "--norc", "--noprofile", "--noediting", "-i")
	bare.until(b, marker)
	cat := startRaw(b, "cat", nil)
	ctx := context.Background()
	var ours, bareT, catT []time.Duration
	for b.Loop() {
		t0 := time.Now()
		resp, err := s.Execute(ctx, "true")
		t1 := time.Now()
		if err != nil || !resp.Success {
			b.Fatalf("Execute(true): %+v, %v", resp, err)
		}
		bare.roundTrip(b, []byte("true\n"), marker)
		t2 := time.Now()
		cat.roundTrip(b, []byte("x\n"), []byte("x\n"))
		t3 := time.Now()
		ours, bareT, catT = append(ours, t1.Sub(t0)), append(bareT, t2.Sub(t1)), append(catT, t3.Sub(t2))
	}
	med, p99 := stats(ours)
	bmed, bp99 := stats(bareT)
	cmed, cp99 := stats(catT)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(med), "median-us")
	b.ReportMetric(us(p99), "p99-us")
	b.ReportMetric(us(bmed), "bare-bash-median-us")
	b.ReportMetric(us(bp99), "bare-bash-p99-us")
	b.ReportMetric(us(cmed), "pty-cat-median-us")
	b.ReportMetric(us(cp99), "pty-cat-p99-us")
	b.ReportMetric(float64(med)/float64(bmed), "x-bare-bash")
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
	s, err := bash.New(bash.Options{Dir: b.TempDir()})
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

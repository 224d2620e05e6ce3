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
	"github.com/unfold-dev/unfold/envs/term"
)

// pexpectRoundTrip is what the seed's pexpect design measured per round
// trip of `true` on this kind of machine (ENVIRONMENT-NOTES.md).
const pexpectRoundTrip = 300 * time.Microsecond

// rawTerm is a program on a pty: the floors the environment is compared
// with. It is read with plain blocking reads, or, when spin is above 0,
// with a term.Reader that busy-waits that long after each line it writes,
// as the environment does.
type rawTerm struct {
	cmd    *exec.Cmd
	master *os.File
	reader *term.Reader
	spin   time.Duration
	buf    []byte
}

func startRaw(b *testing.B, spin time.Duration, name string, env []string, args ...string) *rawTerm {
	b.Helper()
	var m, s *os.File
	var r *term.Reader
	var err error
	if spin > 0 {
		m, r, s, err = term.OpenDirect()
	} else {
		m, s, err = pty.Open()
	}
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
	raw := &rawTerm{cmd: cmd, master: m, reader: r, spin: spin, buf: make([]byte, 0, 4096)}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if r != nil {
			r.Close()
		}
		m.Close()
	})
	return raw
}

// roundTrip writes line and reads until want has arrived.
func (r *rawTerm) roundTrip(b *testing.B, line, want []byte) {
	if r.reader != nil {
		r.reader.SpinUntil(time.Now().Add(r.spin))
	}
	if _, err := r.master.Write(line); err != nil {
		b.Fatal(err)
	}
	r.until(b, want)
}

func (r *rawTerm) until(b *testing.B, want []byte) {
	r.buf = r.buf[:0]
	chunk := make([]byte, 4096)
	for !bytes.Contains(r.buf, want) {
		var n int
		var err error
		if r.reader != nil {
			n, err = r.reader.Read(chunk, time.Time{})
		} else {
			n, err = r.master.Read(chunk)
		}
		if err != nil {
			b.Fatal(err)
		}
		r.buf = append(r.buf, chunk[:n]...)
	}
}

// BenchmarkRoundTrip measures `true` through the environment (marker,
// state, screen bookkeeping) next to three floors, interleaved so machine
// load hits all of them alike: a bare bash on a pty with a minimal marker
// prompt, the same read as the environment reads (busy-waiting for the
// reply for DefaultSpin), and a pty running cat. Run it with
// -benchtime=2000x for 2,000 commands each. It reports medians and p99s in
// microseconds, the ratios of the environment's median to the bare-bash
// floors, and how many times faster than the seed's pexpect design
// (0.3 ms) the median is.
func BenchmarkRoundTrip(b *testing.B) {
	s, err := bash.New(bash.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	marker := []byte("\x1eM\x1f")
	bareEnv := []string{"PS1=\x1eM\x1f", "TERM=dumb", "PATH=" + os.Getenv("PATH")}
	bare := startRaw(b, 0, "bash", bareEnv, "--norc", "--noprofile", "--noediting", "-i")
	bare.until(b, marker)
	spun := startRaw(b, bash.DefaultSpin, "bash", bareEnv, "--norc", "--noprofile", "--noediting", "-i")
	spun.until(b, marker)
	cat := startRaw(b, 0, "cat", nil)
	ctx := context.Background()
	var ours, bareT, spunT, catT []time.Duration
	for b.Loop() {
		t0 := time.Now()
		resp, err := s.Execute(ctx, "true")
		t1 := time.Now()
		if err != nil || !resp.Success {
			b.Fatalf("Execute(true): %+v, %v", resp, err)
		}
		bare.roundTrip(b, []byte("true\n"), marker)
		t2 := time.Now()
		spun.roundTrip(b, []byte("true\n"), marker)
		t3 := time.Now()
		cat.roundTrip(b, []byte("x\n"), []byte("x\n"))
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

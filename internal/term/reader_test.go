//go:build linux

package term_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/internal/term"
)

// startDirect starts name on a terminal from OpenDirect and ends it when
// the test ends.
func startDirect(t *testing.T, name string, args ...string) (*os.File, *term.Reader, *exec.Cmd) {
	t.Helper()
	master, r, slave, err := term.OpenDirect()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	if err := term.Start(cmd, slave); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	t.Cleanup(func() {
		r.Close()
		master.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return master, r, cmd
}

// readUntil reads r until what was read contains want.
func readUntil(t *testing.T, r *term.Reader, want string) string {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(got, []byte(want)) {
		if time.Now().After(deadline) {
			t.Fatalf("read %q, want it to contain %q", got, want)
		}
		n, err := r.Read(buf, time.Now().Add(100*time.Millisecond))
		if err != nil {
			t.Fatalf("Read: got %v after %q, want %q", err, got, want)
		}
		got = append(got, buf[:n]...)
	}
	return string(got)
}

func TestReader(t *testing.T) {
	master, r, cmd := startDirect(t, "cat")
	buf := make([]byte, 4096)
	t.Run("deadline", func(t *testing.T) {
		if n, err := r.Read(buf, time.Now().Add(20*time.Millisecond)); n != 0 || err != nil {
			t.Errorf("nothing written: got %d, %v, want 0, nil", n, err)
		}
	})
	t.Run("output", func(t *testing.T) {
		if _, err := master.Write([]byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		if got := readUntil(t, r, "hello\n"); got != "hello\n" {
			t.Errorf("got %q, want %q (cat's output, no echo)", got, "hello\n")
		}
	})
	t.Run("wake", func(t *testing.T) {
		go r.Wake()
		// No deadline: only the wake-up ends this wait.
		if n, err := r.Read(buf, time.Time{}); n != 0 || err != nil {
			t.Errorf("got %d, %v, want 0, nil", n, err)
		}
	})
	t.Run("wake before the wait", func(t *testing.T) {
		r.Wake()
		if n, err := r.Read(buf, time.Time{}); n != 0 || err != nil {
			t.Errorf("got %d, %v, want 0, nil", n, err)
		}
	})
	t.Run("hangup", func(t *testing.T) {
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		var err error
		for deadline := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(deadline); {
			_, err = r.Read(buf, time.Now().Add(100*time.Millisecond))
		}
		if err == nil || errors.Is(err, os.ErrClosed) {
			t.Errorf("after the program ended: got %v, want a hangup error", err)
		}
	})
	t.Run("close", func(t *testing.T) {
		if err := r.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("second Close: got %v, want nil", err)
		}
		if n, err := r.Read(buf, time.Time{}); n != 0 || !errors.Is(err, os.ErrClosed) {
			t.Errorf("after Close: got %d, %v, want 0, %v", n, err, os.ErrClosed)
		}
	})
}

func TestReaderSpin(t *testing.T) {
	master, r, _ := startDirect(t, "cat")
	buf := make([]byte, 4096)
	t.Run("output", func(t *testing.T) {
		r.SpinUntil(time.Now().Add(time.Second))
		if _, err := master.Write([]byte("quick\n")); err != nil {
			t.Fatal(err)
		}
		if got := readUntil(t, r, "quick\n"); got != "quick\n" {
			t.Errorf("got %q, want %q", got, "quick\n")
		}
	})
	t.Run("output after the spin", func(t *testing.T) {
		r.SpinUntil(time.Now().Add(time.Millisecond))
		go func() {
			time.Sleep(20 * time.Millisecond)
			_, _ = master.Write([]byte("slow\n"))
		}()
		if got := readUntil(t, r, "slow\n"); got != "slow\n" {
			t.Errorf("got %q, want %q", got, "slow\n")
		}
	})
	// A spin must end at the read's deadline, a wake-up and a Close: each
	// of these ends a read well before its 5 s spin would.
	ends := func(t *testing.T, what string, deadline time.Time, end func(), wantErr error) {
		t.Helper()
		start := time.Now()
		r.SpinUntil(start.Add(5 * time.Second))
		if end != nil {
			go func() {
				time.Sleep(10 * time.Millisecond)
				end()
			}()
		}
		if n, err := r.Read(buf, deadline); n != 0 || !errors.Is(err, wantErr) {
			t.Errorf("got %d, %v, want 0, %v", n, err, wantErr)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Read returned after %v, want it at the %s", d, what)
		}
	}
	t.Run("deadline", func(t *testing.T) {
		ends(t, "20ms deadline", time.Now().Add(20*time.Millisecond), nil, nil)
	})
	t.Run("wake", func(t *testing.T) {
		ends(t, "wake-up", time.Time{}, r.Wake, nil)
	})
	// A wait with no spin set looks once, in the kernel; one with a spin
	// set looks again and again until the spin ends.
	t.Run("looks", func(t *testing.T) {
		looks := func(spin bool) uint64 {
			start := time.Now()
			if spin {
				r.SpinUntil(start.Add(50 * time.Millisecond))
			} else {
				r.SpinUntil(time.Time{})
			}
			before := term.SpinLooks(r)
			if n, err := r.Read(buf, start.Add(60*time.Millisecond)); n != 0 || err != nil {
				t.Fatalf("got %d, %v, want 0, nil", n, err)
			}
			return term.SpinLooks(r) - before
		}
		if n := looks(false); n != 0 {
			t.Errorf("no spin: looked %d times while spinning, want 0", n)
		}
		if n := looks(true); n < 2 {
			t.Errorf("a 50ms spin: looked %d times, want it to look again and again", n)
		}
	})
	t.Run("close", func(t *testing.T) {
		ends(t, "Close", time.Time{}, func() { r.Close() }, os.ErrClosed)
	})
}

func TestReaderCloseEndsWait(t *testing.T) {
	_, r, _ := startDirect(t, "sleep", "100")
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 64), time.Time{})
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the read start waiting
	r.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("got %v, want %v", err, os.ErrClosed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still waits after Close")
	}
}

func TestOpenDirectModes(t *testing.T) {
	master, r, slave, err := term.OpenDirect()
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	defer master.Close()
	defer r.Close()
	if changed, err := term.FixModes(master); err != nil || changed {
		t.Errorf("FixModes after OpenDirect: got %v, %v, want false, nil", changed, err)
	}
	if err := master.SetReadDeadline(time.Now()); err == nil {
		t.Errorf("SetReadDeadline: got nil, want an error (the master is not on the runtime poller)")
	}
}

func TestWaitExited(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := term.WaitExited(cmd.Process.Pid); err != nil {
		t.Fatalf("WaitExited: %v", err)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatalf("after WaitExited: %v, want the process still there, unreaped", err)
	}
	if f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:])); f[0] != "Z" {
		t.Errorf("state: got %s, want Z (ended, not reaped)", f[0])
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Wait: got %v, want exit status 3", err)
	}
}

package readfile_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/rootfs"
)

// special makes a FIFO and a socket in a new directory and returns their
// paths, skipping when the system cannot make them.
func special(t *testing.T) (dir, fifo, sock string) {
	t.Helper()
	dir = t.TempDir()
	fifo = filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	sock = filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return dir, fifo, sock
}

// within runs read and fails the test if it has not returned in a while:
// a reader that blocks on a FIFO. It then opens the FIFO for writing so
// the blocked read ends.
func within(t *testing.T, fifo string, read func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := read()
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		t.Fatal("the read blocked on a named pipe")
		return nil, nil
	}
}

func TestRefused(t *testing.T) {
	dir, fifo, sock := special(t)
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 101)), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := rootfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	tests := []struct {
		name, path string
		want       error
		detail     string
	}{
		{"named pipe", fifo, readfile.ErrNotRegular, "it is a named pipe (FIFO)"},
		{"socket", sock, readfile.ErrNotRegular, "it is a socket"},
		{"device", "/dev/zero", readfile.ErrNotRegular, "it is a character device"},
		{"directory", dir, readfile.ErrNotRegular, "it is a directory"},
		{"too large", big, readfile.ErrTooLarge, "101 bytes, more than the 100-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			_, err := within(t, fifo, func() ([]byte, error) { return readfile.Read(tt.path, 100) })
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("Read: got %v, want %v saying %q", err, tt.want, tt.detail)
			}
			if tt.want == readfile.ErrNotRegular {
				_, err = within(t, fifo, func() ([]byte, error) {
					f, err := readfile.Open(tt.path)
					if err == nil {
						f.Close()
					}
					return nil, err
				})
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.detail) {
					t.Errorf("Open: got %v, want %v saying %q", err, tt.want, tt.detail)
				}
			}
			if tt.path == "/dev/zero" {
				return
			}
			rel, _ := filepath.Rel(dir, tt.path)
			_, err = within(t, fifo, func() ([]byte, error) { return readfile.ReadFS(fsys, rel, 100) })
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("ReadFS: got %v, want %v saying %q", err, tt.want, tt.detail)
			}
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.md")
	if err := os.WriteFile(path, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := readfile.Read(path, 5); err != nil || string(data) != "hello" {
		t.Errorf("Read: got %q, %v; want hello", data, err)
	}
	if data, err := readfile.ReadFS(afero.NewBasePathFs(afero.NewOsFs(), dir), "a.md", 5); err != nil || string(data) != "hello" {
		t.Errorf("ReadFS: got %q, %v; want hello", data, err)
	}
	f, err := readfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := readfile.Read(filepath.Join(dir, "missing"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want %v", err, os.ErrNotExist)
	}
}

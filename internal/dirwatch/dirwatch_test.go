//go:build linux

package dirwatch

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func isJSON(name string) bool { return strings.HasSuffix(name, ".json") }

// step is one change to the filesystem and whether the next question must
// report it.
type step struct {
	name string
	do   func(t *testing.T, parent, dir string)
	want bool
}

func write(name, data string) func(*testing.T, string, string) {
	return func(t *testing.T, _, dir string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChanged asks right after each change, without waiting: the change
// is seen at once, and a question with nothing new answers false.
func TestChanged(t *testing.T) {
	tests := []struct {
		name  string
		exist bool // the directory exists when the watch starts
		steps []step
	}{
		{"files in the directory", true, []step{
			{"nothing", func(*testing.T, string, string) {}, false},
			{"a file added", write("a.json", "1"), true},
			{"asked again", func(*testing.T, string, string) {}, false},
			{"written in place", write("a.json", "2"), true},
			{"the same bytes written", write("a.json", "2"), true},
			{"its times set", func(t *testing.T, _, dir string) {
				at := time.Now().Add(-time.Hour)
				if err := os.Chtimes(filepath.Join(dir, "a.json"), at, at); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"a file that does not count", write("notes.txt", "x"), false},
			{"renamed in", func(t *testing.T, parent, dir string) {
				p := filepath.Join(parent, "b.json")
				if err := os.WriteFile(p, []byte("b"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(p, filepath.Join(dir, "b.json")); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"renamed out", func(t *testing.T, parent, dir string) {
				if err := os.Rename(filepath.Join(dir, "b.json"), filepath.Join(parent, "b.json")); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"removed", func(t *testing.T, _, dir string) {
				if err := os.Remove(filepath.Join(dir, "a.json")); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"a file of the parent", func(t *testing.T, parent, _ string) {
				if err := os.WriteFile(filepath.Join(parent, "other.json"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}, false},
		}},
		{"the directory comes and goes", false, []step{
			{"nothing yet", func(*testing.T, string, string) {}, false},
			{"made", func(t *testing.T, _, dir string) {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"a file in the new directory", write("a.json", "1"), true},
			{"removed with its files", func(t *testing.T, _, dir string) {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"made again", func(t *testing.T, _, dir string) {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"a file in it", write("a.json", "1"), true},
			{"replaced by another", func(t *testing.T, parent, dir string) {
				if err := os.Rename(dir, filepath.Join(parent, "old")); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}, true},
			{"a file in the one renamed away", func(t *testing.T, parent, _ string) {
				if err := os.WriteFile(filepath.Join(parent, "old", "c.json"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}, false},
			{"a file in the new one", write("d.json", "1"), true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "env")
			if tt.exist {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			w, err := New(dir, isJSON)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for _, st := range tt.steps {
				st.do(t, parent, dir)
				got, err := w.Changed()
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				if got != st.want {
					t.Errorf("%s: got changed %v, want %v", st.name, got, st.want)
				}
			}
		})
	}
}

// TestOverflow: when the kernel drops events, a change is reported.
func TestOverflow(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	names := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	for _, p := range names {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Changed(); err != nil {
		t.Fatal(err)
	}
	limit := 16384
	if data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if limit, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
			t.Fatal(err)
		}
	}
	// Alternating files: the kernel merges only an event equal to the last
	// one queued.
	at := time.Now()
	for i := range limit + 10 {
		if err := os.Chtimes(names[i%2], at, at); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := w.Changed(); !got || err != nil {
		t.Errorf("after an overflow: got (%v, %v), want (true, nil)", got, err)
	}
	if got, err := w.Changed(); got || err != nil {
		t.Errorf("after the overflow was read: got (%v, %v), want (false, nil)", got, err)
	}
}

// TestParentGone: a parent removed loses the watch, which says so at every
// later question.
func TestParentGone(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(filepath.Join(parent, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := New(filepath.Join(parent, "env"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.RemoveAll(parent); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := w.Changed()
		if !got || err == nil || !strings.Contains(err.Error(), "the parent directory was removed or renamed") {
			t.Errorf("question %d: got (%v, %v), want a change and the watch lost", i+1, got, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "no", "env"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing parent: got %v, want ErrNotExist", err)
	}
	w, err := New(filepath.Join(t.TempDir(), "env"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("a second close: got %v, want nil", err)
	}
	if got, err := w.Changed(); !got || err == nil {
		t.Errorf("after close: got (%v, %v), want a change and an error", got, err)
	}
}

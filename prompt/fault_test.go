package prompt_test

import (
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/spf13/afero"
)

// fullFs is a filesystem whose disk can fill up: while full is set, a
// write to a file opened for writing stores half its bytes and fails with
// ENOSPC, as a real full disk does.
type fullFs struct {
	afero.Fs
	full atomic.Bool
}

func (f *fullFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil || flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return file, err
	}
	return &fullFile{File: file, fs: f}, nil
}

func (f *fullFs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

type fullFile struct {
	afero.File
	fs *fullFs
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// TestContextFilesDiskFull opens a content-only section while the disk is
// full: the model gets the failure DESIGN.md spells out with the cause,
// nothing changes in the session, and once there is room the same call
// writes the same bytes as on a healthy disk.
func TestContextFilesDiskFull(t *testing.T) {
	healthy := afero.NewMemMapFs()
	p, sess := openFixture(t)
	if res, err := call(t, p, sess, healthy, `{"section_keys":["guide"],"reason":"read the guide"}`); err != nil || !res.Success {
		t.Fatalf("healthy disk: got %+v, %v", res, err)
	}
	want, err := afero.ReadFile(healthy, "context/guide.md")
	if err != nil {
		t.Fatal(err)
	}

	fsys := &fullFs{Fs: afero.NewMemMapFs()}
	p, sess = openFixture(t)
	seq := sess.Seq()
	// A context file from an earlier turn, and the one being rewritten:
	// neither may be left half-written.
	if err := afero.WriteFile(fsys.Fs, "context/old.md", []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fsys.Fs, "context/guide.md", []byte("previous turn"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys.full.Store(true)
	res, err := call(t, p, sess, fsys, `{"section_keys":["guide"],"reason":"read the guide"}`)
	if err != nil {
		t.Fatalf("full disk: got Go error %v, want a failed result", err)
	}
	if res.Success || !strings.HasPrefix(res.Message, "Failed to write context for 'guide': ") || !strings.Contains(res.Message, "no space left on device") {
		t.Errorf("full disk: got %+v, want failure \"Failed to write context for 'guide': ...no space left on device\"", res)
	}
	if got := sess.Seq(); got != seq {
		t.Errorf("session: got seq %d after the failed write, want %d (no state change)", got, seq)
	}

	if got, err := afero.ReadFile(fsys, "context/guide.md"); err != nil || string(got) != "previous turn" {
		t.Errorf("context/guide.md after the failed write: got %q, %v, want the previous turn's bytes kept", got, err)
	}
	if got, err := afero.ReadFile(fsys, "context/old.md"); err != nil || string(got) != "kept" {
		t.Errorf("context/old.md: got %q, %v, want it untouched", got, err)
	}

	fsys.full.Store(false)
	res, err = call(t, p, sess, fsys, `{"section_keys":["guide"],"reason":"read the guide"}`)
	if err != nil || !res.Success {
		t.Fatalf("room again: got %+v, %v, want success", res, err)
	}
	got, err := afero.ReadFile(fsys, "context/guide.md")
	if err != nil || string(got) != string(want) {
		t.Errorf("context/guide.md: got %q, %v, want the healthy disk's %q", got, err, want)
	}
}

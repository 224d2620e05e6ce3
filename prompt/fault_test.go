package prompt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/internal/faultfs"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
)

// TestContextFilesDiskFull opens a content-only section while the disk is
// full: the model gets the failure docs/design.md spells out with the cause,
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

	fsys := faultfs.NewFull(afero.NewMemMapFs())
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
	fsys.SetFull(true)
	res, err := call(t, p, sess, fsys, `{"section_keys":["guide"],"reason":"read the guide"}`)
	if err != nil {
		t.Fatalf("full disk: got Go error %v, want a failed result", err)
	}
	if res.Success || !strings.HasPrefix(res.Message, "Failed to write context for 'guide': ") || !strings.Contains(res.Message, "no space left on device") {
		t.Errorf("full disk: got %+v, want failure \"Failed to write context for 'guide': ...no space left on device\"", res)
	}
	onlyFailureSince(t, sess, seq, res.Message)

	if got, err := afero.ReadFile(fsys, "context/guide.md"); err != nil || string(got) != "previous turn" {
		t.Errorf("context/guide.md after the failed write: got %q, %v, want the previous turn's bytes kept", got, err)
	}
	if got, err := afero.ReadFile(fsys, "context/old.md"); err != nil || string(got) != "kept" {
		t.Errorf("context/old.md: got %q, %v, want it untouched", got, err)
	}

	fsys.SetFull(false)
	res, err = call(t, p, sess, fsys, `{"section_keys":["guide"],"reason":"read the guide"}`)
	if err != nil || !res.Success {
		t.Fatalf("room again: got %+v, %v, want success", res, err)
	}
	got, err := afero.ReadFile(fsys, "context/guide.md")
	if err != nil || string(got) != string(want) {
		t.Errorf("context/guide.md: got %q, %v, want the healthy disk's %q", got, err, want)
	}
}

// TestPromptTooLarge renders three sections whose bodies take 15 MiB
// each: the third takes the prompt past MaxPromptBytes, and the render
// fails naming it; two of them render.
func TestPromptTooLarge(t *testing.T) {
	type P struct{ S string }
	big := strings.Repeat("0123456789abcde\n", 15<<16)
	sec := func(key string) *section.Section {
		return section.New(section.Spec[P]{Key: key, Title: key, Body: "{{.S}}"})
	}
	p := prompt.MustNew("t", "big", sec("a"), sec("b"), sec("c")).MustBind(P{big})
	_, err := p.Render(nil, nil)
	var se *section.Error
	if !errors.Is(err, prompt.ErrPromptTooLarge) || !errors.As(err, &se) || se.Path != "c" {
		t.Errorf("got %v, want %v at section c", err, prompt.ErrPromptTooLarge)
	}
	p = prompt.MustNew("t", "big", sec("a"), sec("b")).MustBind(P{big})
	if r, err := p.Render(nil, nil); err != nil || len(r.Text()) < 2*len(big) {
		t.Errorf("two sections: got %v", err)
	}
}

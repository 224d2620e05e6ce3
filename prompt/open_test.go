package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// openFixture is a prompt with every kind of section open_sections meets:
//
//	intro      FULL, content
//	guide      SUMMARY, content, with children style (FULL) and old (disabled)
//	verify     SUMMARY, carries the verify tool
//	kit        SUMMARY, content itself, child kit.run carries a tool
func openFixture(t *testing.T) (*prompt.Prompt, *session.Session) {
	t.Helper()
	tmpl := prompt.MustNew("test", "open",
		text("intro", "Intro", "Read the guide."),
		summarized("guide", "Guide", "# Guide\n\nThe whole guide.", "A guide is available.", nil,
			text("style", "Style", "Use tabs."),
			section.New(section.Spec[none]{Key: "old", Title: "Old", Body: "Gone.", Enabled: func(none) bool { return false }}),
		),
		summarized("verify", "Verification", "Use verify.", "Verification tools.", []*tools.Tool{echoTool("verify")}),
		summarized("kit", "Kit", "Tools inside.", "A kit.", nil,
			section.New(section.Spec[none]{Key: "run", Title: "Run", Body: "Run it.", Tools: []*tools.Tool{echoTool("run")}})),
	)
	return tmpl.MustBind(), session.New()
}

// call renders p and calls open_sections with raw JSON arguments.
func call(t *testing.T, p *prompt.Prompt, sess *session.Session, fs afero.Fs, args string) (tools.Result, error) {
	t.Helper()
	r, err := p.Render(sess, fs)
	if err != nil {
		t.Fatal(err)
	}
	open := r.Tool(prompt.OpenSectionsName)
	if open == nil {
		t.Fatal("open_sections not offered")
	}
	return open.Call(context.Background(), tools.Context{Session: sess}, json.RawMessage(args))
}

func wantFailure(t *testing.T, res tools.Result, err error, msg string) {
	t.Helper()
	if err != nil {
		t.Fatalf("got Go error %v, want a failed result", err)
	}
	if res.Success || res.Message != msg {
		t.Errorf("got (success=%v) %q, want failure %q", res.Success, res.Message, msg)
	}
}

// onlyFailureSince checks that the session changed after event seq only by
// recording one failed call, whose message is msg.
func onlyFailureSince(t *testing.T, sess *session.Session, seq uint64, msg string) {
	t.Helper()
	events := sess.Events()[seq:]
	if len(events) != 1 {
		t.Fatalf("got %d events after the failed call, want only its record", len(events))
	}
	if f, ok := events[0].Event.(tools.CallFailed); !ok || f.Message != msg || len(f.Discarded) != 0 {
		t.Errorf("got event %s %+v, want the failure %q recorded", events[0].Type, events[0].Event, msg)
	}
}

func files(t *testing.T, fs afero.Fs) []string {
	t.Helper()
	var names []string
	_ = afero.Walk(fs, "context", func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			names = append(names, strings.TrimPrefix(path, "/"))
		}
		return nil
	})
	return names
}

func TestOpenSectionsEmptyList(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	res, err := call(t, p, sess, fs, `{"section_keys":[],"reason":"r"}`)
	wantFailure(t, res, err, "At least one section key must be provided.")
	if got := files(t, fs); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
}

// TestOpenSectionsManyKeys: a call with more different keys than one may
// open is refused before any key is looked at; repeats open once.
func TestOpenSectionsManyKeys(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	args, _ := json.Marshal(map[string]any{"section_keys": manyKeys(1025), "reason": "r"})
	res, err := call(t, p, sess, fs, string(args))
	wantFailure(t, res, err, "At most 1024 section keys can be opened at a time; 1025 were given. Open the sections needed now.")

	args, _ = json.Marshal(map[string]any{"section_keys": slices.Repeat([]string{"guide"}, 1024), "reason": "r"})
	res, err = call(t, p, sess, fs, string(args))
	if err != nil || !res.Success {
		t.Fatalf("1024 repeats of one key: got %+v, %v; want it opened", res, err)
	}
	if got := files(t, fs); !slices.Equal(got, []string{"context/guide.md"}) {
		t.Errorf("files written: %v, want context/guide.md once", got)
	}
}

func TestOpenSectionsUnknownKey(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	res, err := call(t, p, sess, fs, `{"section_keys":["guide","nope"],"reason":"r"}`)
	wantFailure(t, res, err, "Section 'nope' does not exist in this prompt.")
	if got := files(t, fs); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}
}

func TestOpenSectionsDisabledKeyDoesNotExist(t *testing.T) {
	p, sess := openFixture(t)
	res, err := call(t, p, sess, afero.NewMemMapFs(), `{"section_keys":["guide.old"],"reason":"r"}`)
	wantFailure(t, res, err, "Section 'guide.old' does not exist in this prompt.")
}

func TestOpenSectionsAlreadyExpanded(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	res, err := call(t, p, sess, fs, `{"section_keys":["guide","intro"],"reason":"r"}`)
	wantFailure(t, res, err, "Section 'intro' is already expanded.")
	if got := files(t, fs); len(got) != 0 {
		t.Errorf("all-or-nothing broken: files written: %v", got)
	}
}

func TestOpenSectionsDuplicateKey(t *testing.T) {
	t.Run("content", func(t *testing.T) {
		p, sess := openFixture(t)
		res, err := call(t, p, sess, afero.NewMemMapFs(), `{"section_keys":["guide","guide"],"reason":"r"}`)
		if err != nil || !res.Success || res.Message != "Section content written to: context/guide.md" {
			t.Errorf("got %+v, %v; want guide written once", res, err)
		}
	})
	t.Run("tools", func(t *testing.T) {
		p, sess := openFixture(t)
		_, err := call(t, p, sess, nil, `{"section_keys":["verify","kit.run","verify"],"reason":"r"}`)
		var ve *prompt.VisibilityExpansionError
		if !errors.As(err, &ve) || !slices.Equal(ve.Keys, []string{"verify", "kit.run"}) {
			t.Errorf("got %v, want an expansion of verify and kit.run, each once", err)
		}
	})
}

// TestExpansionErrorText checks that the error names what to open and why,
// as the model sees it when it is not handled.
func TestExpansionErrorText(t *testing.T) {
	p, sess := openFixture(t)
	res, err := call(t, p, sess, nil, `{"section_keys":["verify","kit.run"],"reason":"check the build"}`)
	want := "open sections: verify, kit.run. Reason: check the build"
	if err == nil || err.Error() != want || res.Message != want {
		t.Errorf("got error %v and message %q, want both %q", err, res.Message, want)
	}
	noReason := &prompt.VisibilityExpansionError{Keys: []string{"db.schema", "db.queries"}}
	if got, want := noReason.Error(), "open sections: db.schema, db.queries"; got != want {
		t.Errorf("without a reason: got %q, want %q", got, want)
	}
}

func TestOpenSectionsKeysCheckedBeforeFilesystem(t *testing.T) {
	p, sess := openFixture(t)
	res, err := call(t, p, sess, nil, `{"section_keys":["nope"],"reason":"r"}`)
	wantFailure(t, res, err, "Section 'nope' does not exist in this prompt.")
}

func TestOpenSectionsNoFilesystem(t *testing.T) {
	p, sess := openFixture(t)
	res, err := call(t, p, sess, nil, `{"section_keys":["guide"],"reason":"r"}`)
	wantFailure(t, res, err, "Cannot write context files: no filesystem available.")
}

func TestOpenSectionsWritesContextFiles(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	// Reopening must succeed again and rewrite the same bytes.
	var first []byte
	for i := range 2 {
		res, err := call(t, p, sess, fs, `{"section_keys":["guide","guide.style"],"reason":"need the rules"}`)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if want := "Section content written to: context/guide.md, context/guide.style.md"; !res.Success || res.Message != want {
			t.Fatalf("call %d: got (success=%v) %q, want %q", i, res.Success, res.Message, want)
		}
		want := prompt.OpenSectionsResult{WrittenFiles: []string{"context/guide.md", "context/guide.style.md"}}
		if !reflect.DeepEqual(res.Value, want) {
			t.Errorf("value: got %#v, want %#v", res.Value, want)
		}
		got, err := afero.ReadFile(fs, "context/guide.md")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
			golden(t, "context/guide.md", string(got))
			style, _ := afero.ReadFile(fs, "context/guide.style.md")
			golden(t, "context/guide.style.md", string(style))
		} else if string(got) != string(first) {
			t.Errorf("re-open wrote different bytes:\n%s\nvs\n%s", got, first)
		}
	}
	if got, want := files(t, fs), []string{"context/guide.md", "context/guide.style.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("files: got %v, want %v (no temporary files left)", got, want)
	}
	if ov := visibility.Get(sess); ov.Len() != 0 {
		t.Errorf("content-only open changed the session: %v", ov.Paths())
	}
}

func TestOpenSectionsToolContextFilesystemWins(t *testing.T) {
	p, sess := openFixture(t)
	renderFS, callFS := afero.NewMemMapFs(), afero.NewMemMapFs()
	r, err := p.Render(sess, renderFS)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Tool(prompt.OpenSectionsName).Call(context.Background(), tools.Context{FS: callFS}, json.RawMessage(`{"section_keys":["guide"],"reason":"r"}`))
	if err != nil || !res.Success {
		t.Fatalf("got %v %+v", err, res)
	}
	if len(files(t, renderFS)) != 0 || len(files(t, callFS)) != 1 {
		t.Errorf("render fs %v, call fs %v: want the call's filesystem used", files(t, renderFS), files(t, callFS))
	}
}

func TestOpenSectionsToolBearingReturnsExpansion(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	_, err := call(t, p, sess, fs, `{"section_keys":["verify"],"reason":"check my work"}`)
	if !errors.Is(err, prompt.ErrVisibilityExpansion) {
		t.Fatalf("got %v, want ErrVisibilityExpansion", err)
	}
	var ve *prompt.VisibilityExpansionError
	if !errors.As(err, &ve) {
		t.Fatalf("errors.As: got %T", err)
	}
	if !reflect.DeepEqual(ve.Keys, []string{"verify"}) || ve.Reason != "check my work" ||
		!reflect.DeepEqual(ve.Overrides, prompt.Overrides{"verify": visibility.Full}) {
		t.Errorf("got %+v", ve)
	}
	if got := files(t, fs); len(got) != 0 {
		t.Errorf("files written: %v", got)
	}

	if err := prompt.ApplyExpansion(sess, err); err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(sess, fs)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(r); got != "verify,open_sections" {
		t.Errorf("tools after expansion: got %q, want %q", got, "verify,open_sections")
	}
	if !strings.Contains(r.Text(), "## 3. Verification (verify)\n\nUse verify.") {
		t.Errorf("verify not rendered in full:\n%s", r.Text())
	}
	res, err := r.Tool(prompt.OpenSectionsName).Call(context.Background(), tools.Context{}, json.RawMessage(`{"section_keys":["verify"],"reason":"again"}`))
	wantFailure(t, res, err, "Section 'verify' is already expanded.")
}

func TestOpenSectionsMixedRequestWritesNothing(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewMemMapFs()
	_, err := call(t, p, sess, fs, `{"section_keys":["guide","verify"],"reason":"r"}`)
	var ve *prompt.VisibilityExpansionError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a VisibilityExpansionError", err)
	}
	want := prompt.Overrides{"guide": visibility.Full, "verify": visibility.Full}
	if !reflect.DeepEqual(ve.Overrides, want) || !reflect.DeepEqual(ve.Keys, []string{"guide", "verify"}) {
		t.Errorf("got keys %v overrides %v, want [guide verify] %v", ve.Keys, ve.Overrides, want)
	}
	if got := files(t, fs); len(got) != 0 {
		t.Errorf("mixed request wrote %v", got)
	}
}

func TestOpenSectionsChildUnderSummarizedParent(t *testing.T) {
	t.Run("tool-bearing opens the ancestors", func(t *testing.T) {
		p, sess := openFixture(t)
		_, err := call(t, p, sess, afero.NewMemMapFs(), `{"section_keys":["kit.run"],"reason":"r"}`)
		var ve *prompt.VisibilityExpansionError
		if !errors.As(err, &ve) {
			t.Fatalf("got %v, want a VisibilityExpansionError", err)
		}
		want := prompt.Overrides{"kit": visibility.Full, "kit.run": visibility.Full}
		if !reflect.DeepEqual(ve.Overrides, want) {
			t.Errorf("overrides: got %v, want %v", ve.Overrides, want)
		}
		if err := prompt.ApplyExpansion(sess, err); err != nil {
			t.Fatal(err)
		}
		r, err := p.Render(sess, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolNames(r); got != "run,open_sections" {
			t.Errorf("tools: got %q, want run,open_sections", got)
		}
	})
	t.Run("content-only writes the child", func(t *testing.T) {
		p, sess := openFixture(t)
		fs := afero.NewMemMapFs()
		res, err := call(t, p, sess, fs, `{"section_keys":["guide.style"],"reason":"r"}`)
		if err != nil || res.Message != "Section content written to: context/guide.style.md" {
			t.Fatalf("got %v %q", err, res.Message)
		}
	})
}

// failFS fails every write, after creating the file when half is set and
// writing part of it.
type failFS struct {
	afero.Fs
	half bool
}

type halfFile struct{ afero.File }

func (f halfFile) Write(b []byte) (int, error) {
	n, _ := f.File.Write(b[:len(b)/2])
	return n, errors.New("disk full")
}

func (f failFS) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return f.Fs.OpenFile(name, flag, perm)
	}
	if !f.half {
		return nil, errors.New("read-only file system")
	}
	file, err := f.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return halfFile{file}, nil
}

func TestOpenSectionsFailingFilesystem(t *testing.T) {
	for _, tc := range []struct {
		name string
		half bool
		msg  string
	}{
		{"refuses writes", false, "Failed to write context for 'guide': read-only file system"},
		{"fails mid-write", true, "Failed to write context for 'guide': disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, sess := openFixture(t)
			mem := afero.NewMemMapFs()
			res, err := call(t, p, sess, failFS{Fs: mem, half: tc.half}, `{"section_keys":["guide"],"reason":"r"}`)
			wantFailure(t, res, err, tc.msg)
			if got := files(t, mem); len(got) != 0 {
				t.Errorf("a failed write left files: %v", got)
			}
		})
	}
}

func TestOpenSectionsBadArguments(t *testing.T) {
	big := `{"section_keys":[` + strings.Repeat(`"guide-xxxxxxxx",`, 60000) + `"x"],"reason":"r"}`
	for _, tc := range []struct {
		name, args, want string
	}{
		{"non-string keys", `{"section_keys":[1],"reason":"r"}`, "section_keys"},
		{"extra fields", `{"section_keys":["guide"],"reason":"r","force":true}`, "force"},
		{"missing reason", `{"section_keys":["guide"]}`, "reason"},
		{"not json", `{section_keys`, "Invalid arguments"},
		{"1 MB of keys", big, "Section 'guide-xxxxxxxx' does not exist in this prompt."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, sess := openFixture(t)
			fs := afero.NewMemMapFs()
			res, err := call(t, p, sess, fs, tc.args)
			if err != nil {
				t.Fatalf("got Go error %v, want a failed result", err)
			}
			if res.Success || !strings.Contains(res.Message, tc.want) {
				t.Errorf("got (success=%v) %q, want a failure mentioning %q", res.Success, res.Message, tc.want)
			}
			if got := files(t, fs); len(got) != 0 {
				t.Errorf("files written: %v", got)
			}
			if visibility.Get(sess).Len() != 0 {
				t.Errorf("session changed")
			}
		})
	}
}

func TestApplyExpansionRejectsOtherErrors(t *testing.T) {
	if err := prompt.ApplyExpansion(session.New(), errors.New("x")); err == nil {
		t.Error("got nil, want an error for a non-expansion error")
	}
}

// TestOpenSectionsConcurrent opens one content section from many goroutines
// on a real directory: each call succeeds and the file is whole.
func TestOpenSectionsConcurrent(t *testing.T) {
	p, sess := openFixture(t)
	fs := afero.NewBasePathFs(afero.NewOsFs(), t.TempDir())
	r, err := p.Render(sess, fs)
	if err != nil {
		t.Fatal(err)
	}
	open := r.Tool(prompt.OpenSectionsName)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			res, err := open.Call(context.Background(), tools.Context{}, json.RawMessage(`{"section_keys":["guide"],"reason":"r"}`))
			if err != nil || !res.Success {
				t.Errorf("got %v %+v", err, res)
			}
		})
	}
	wg.Wait()
	want, err := p.Standalone("guide")
	if err != nil {
		t.Fatal(err)
	}
	got, err := afero.ReadFile(fs, "context/guide.md")
	if err != nil || string(got) != want {
		t.Errorf("context/guide.md: got %q, %v; want %q", got, err, want)
	}
}

// TestLongPathContextFile opens a section four levels down whose keys
// take 64 bytes each: its path is too long to be a file's name, so its
// context file is named by the path's start and a hash, which the
// summary names; the file is written on a real file system.
func TestLongPathContextFile(t *testing.T) {
	key := func(c string) string { return strings.Repeat(c, 64) }
	leaf := summarized(key("d"), "Leaf", "The leaf's body.", "A leaf.", nil)
	p := prompt.MustNew("test", "long", text(key("a"), "A", "a", text(key("b"), "B", "b", text(key("c"), "C", "c", leaf)))).MustBind()
	sess := session.New()
	fs := afero.NewBasePathFs(afero.NewOsFs(), t.TempDir())
	r, err := p.Render(sess, fs)
	if err != nil {
		t.Fatal(err)
	}
	path := key("a") + "." + key("b") + "." + key("c") + "." + key("d")
	name := regexp.MustCompile(`written to (context/\S+\.md) for you`).FindStringSubmatch(r.Text())
	if name == nil || len(name[1]) > len("context/")+255 || !strings.HasPrefix(name[1], "context/"+path[:200]+"-") {
		t.Fatalf("the summary names %v, want a name of at most 255 bytes starting with the path", name)
	}
	res, err := call(t, p, sess, fs, `{"section_keys":["`+path+`"],"reason":"read it"}`)
	if err != nil || !res.Success || res.Message != "Section content written to: "+name[1] {
		t.Fatalf("got %+v, %v", res, err)
	}
	if got, err := afero.ReadFile(fs, name[1]); err != nil || !strings.Contains(string(got), "The leaf's body.") {
		t.Errorf("the file holds %q, %v", got, err)
	}
}

package main

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
)

// readRecords reads the transcript at path with agent.ReadTranscript.
func readRecords(t *testing.T, path string) *agent.Transcript {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := agent.ReadTranscript(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// TestAgentAppendAfterCut: a run appended with --transcript to a file
// whose last line was cut short removes that line first, and says so;
// the file then resumes, as the appended run. A last line that lacks only
// its newline is kept, and gets one.
func TestAgentAppendAfterCut(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.jsonl")
	helpRun(t, dir, ref, "All done.")
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	for _, tt := range []struct {
		name string
		cut  []byte
		note string // "" when nothing is removed
	}{
		{"mid-line", data[:last+20], "its last line was cut short (a run stopped while writing it); removed it (20 bytes) so that the file resumes"},
		{"before the newline", data[:len(data)-1], ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tpath := filepath.Join(t.TempDir(), "run.jsonl")
			if err := os.WriteFile(tpath, tt.cut, 0o644); err != nil {
				t.Fatal(err)
			}
			url, _ := fakeEndpoint(t, "Second answer.")
			code, _, stderr := agentRun(t, url, "second task", "--project", dir, "--builtins", "none", "--transcript", tpath)
			if code != 0 || !strings.Contains(stderr, tt.note) || (tt.note == "" && strings.Contains(stderr, "cut short")) {
				t.Fatalf("second run: exit %d; stderr:\n%s\nwant exit 0 and %q", code, stderr, tt.note)
			}
			url, reqs := fakeEndpoint(t, "Follow-up answer.")
			code, stdout, stderr := agentRun(t, url, "follow up", "--project", dir, "--builtins", "none", "--resume", tpath)
			if code != 0 || stdout != "Follow-up answer.\n" {
				t.Fatalf("resume: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
			}
			if text := requestText((*reqs)[0]); !strings.Contains(text, "second task") || !strings.Contains(text, "Second answer.") || strings.Contains(text, "look around") {
				t.Errorf("the resumed request should continue the second run:\n%s", text)
			}
			readRecords(t, tpath)
		})
	}
}

// TestAgentResumeIntoAnother: --resume A --transcript B copies the
// conversation resumed into B first, so that B resumes on its own, with
// the first run's task, its command and the command's session event; A
// is left as it was. A file that holds only the resumed run, as one
// written without the copy, is refused with what to do.
func TestAgentResumeIntoAnother(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	url, _ := fakeEndpoint(t, `call bash {"command":"echo hi > a.txt; echo first-ok"}`, "All done.")
	if code, _, stderr := agentRun(t, url, "do it", "--project", dir, "--builtins", "bash", "--transcript", a); code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, stderr)
	}
	before, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	url, _ = fakeEndpoint(t, `call bash {"command":"echo second-ok"}`, "Second done.")
	code, _, stderr := agentRun(t, url, "more", "--project", dir, "--builtins", "bash", "--resume", a, "--transcript", b)
	if code != 0 || !strings.Contains(stderr, "--transcript: "+b+": the conversation resumed from "+a+" is copied into it first, so that it resumes on its own") {
		t.Fatalf("resume into b: exit %d; stderr:\n%s", code, stderr)
	}
	if after, err := os.ReadFile(a); err != nil || !bytes.Equal(after, before) {
		t.Errorf("a changed: %v", err)
	}
	url, reqs := fakeEndpoint(t, "Third.")
	code, stdout, stderr := agentRun(t, url, "what did we do?", "--project", dir, "--builtins", "bash", "--resume", b)
	if code != 0 || stdout != "Third.\n" {
		t.Fatalf("resume of b: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	text := requestText((*reqs)[0])
	for _, want := range []string{"do it", "first-ok", "more", "second-ok", "what did we do?"} {
		if !strings.Contains(text, want) {
			t.Errorf("the request resuming b lacks %q:\n%s", want, text)
		}
	}

	// b without the copied conversation: its first run is a resume.
	data, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte(`"resumed":true`))
	orphan := filepath.Join(dir, "orphan.jsonl")
	if err := os.WriteFile(orphan, data[bytes.LastIndexByte(data[:at], '\n')+1:], 0o644); err != nil {
		t.Fatal(err)
	}
	url, reqs = fakeEndpoint(t, "Not reached.")
	code, _, stderr = agentRun(t, url, "go on", "--project", dir, "--builtins", "bash", "--resume", orphan)
	if code != 1 || !strings.Contains(stderr, "its first run resumes a conversation that is not in it: it continues another transcript") || len(*reqs) != 0 {
		t.Errorf("resume of a file holding only a resumed run: exit %d after %d requests; stderr:\n%s\nwant exit 1 before any request, saying it continues another transcript", code, len(*reqs), stderr)
	}
}

// TestAgentResumeNoRun: a transcript with no run in it, empty or with
// records of kinds not understood, is refused before the model is
// called, naming those kinds, and left as it was.
func TestAgentResumeNoRun(t *testing.T) {
	for _, tt := range []struct{ name, data, want string }{
		{"empty", "", "it holds no run to resume; is this a transcript?"},
		{"unknown kinds", `{"kind":"future_thing","x":1}` + "\n" + `{"kind":"other"}` + "\n",
			`it holds no run to resume, only records of kinds not understood ("future_thing", "other"); is this a transcript, of this version?`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tpath := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(tpath, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			url, reqs := fakeEndpoint(t, "Not reached.")
			code, _, stderr := agentRun(t, url, "", "--project", t.TempDir(), "--builtins", "none", "--resume", tpath)
			if code != 1 || !strings.Contains(stderr, "--resume: "+tpath+": agent: read transcript: "+tt.want) || len(*reqs) != 0 {
				t.Errorf("exit %d after %d requests; stderr:\n%s\nwant exit 1 before any request, saying %q", code, len(*reqs), stderr, tt.want)
			}
			if got, err := os.ReadFile(tpath); err != nil || string(got) != tt.data {
				t.Errorf("the file after the refusal: %q, %v; want it unchanged", got, err)
			}
		})
	}
}

// TestAgentTranscriptInUse: while one unfold agent process writes a
// transcript, a second run that would write it (--transcript), resume it
// in place or resume it into another file is refused at the start,
// naming the file; the first run's transcript then resumes.
func TestAgentTranscriptInUse(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(dir, "run.jsonl")
	helpRun(t, dir, tpath, "All done.")
	called, release := make(chan struct{}, 1), make(chan struct{})
	url, _ := scriptedEndpoint(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		called <- struct{}{}
		<-release
		streamText(w, "First answer.")
	})
	cmd := exec.Command(binary, "agent", "first", "--project", dir, "--builtins", "none", "--base-url", url, "--model", "m", "--resume", tpath)
	var firstErr bytes.Buffer
	cmd.Stderr = &firstErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			close(release)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	select {
	case <-called:
	case <-time.After(30 * time.Second):
		t.Fatalf("the first run never called the model; stderr:\n%s", firstErr.String())
	}
	want := tpath + " is in use by another unfold agent run; wait for that run to end, or use another file"
	for _, args := range [][]string{
		{"--transcript", tpath},
		{"--resume", tpath},
		{"--resume", tpath, "--transcript", filepath.Join(dir, "other.jsonl")},
	} {
		url2, reqs := fakeEndpoint(t, "Second answer.")
		code, _, stderr := agentRun(t, url2, append([]string{"second", "--project", dir, "--builtins", "none"}, args...)...)
		if code != 1 || !strings.Contains(stderr, want) || len(*reqs) != 0 {
			t.Errorf("%q while another run writes it: exit %d after %d requests; stderr:\n%s\nwant exit 1 before any request, with %q", args, code, len(*reqs), stderr, want)
		}
	}
	released = true
	close(release)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the first run: %v; stderr:\n%s", err, firstErr.String())
	}
	url3, reqs := fakeEndpoint(t, "Resumed.")
	code, stdout, stderr := agentRun(t, url3, "then", "--project", dir, "--builtins", "none", "--resume", tpath)
	if code != 0 || stdout != "Resumed.\n" {
		t.Fatalf("resume after the first run: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if text := requestText((*reqs)[0]); !strings.Contains(text, "First answer.") || strings.Contains(text, "Second answer.") {
		t.Errorf("the resumed request should continue the first run alone:\n%s", text)
	}
	readRecords(t, tpath)
}

// TestAgentTranscriptNotOurs: a --transcript file that is not a
// transcript and does not end with a newline is refused and left as it
// is, not cut at its last line; a run refused before it could resume
// into a new --transcript file leaves no such file behind.
func TestAgentTranscriptNotOurs(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	const text = "my notes\nline two without newline"
	if err := os.WriteFile(notes, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	url, reqs := fakeEndpoint(t, "Not reached.")
	code, _, stderr := agentRun(t, url, "hi", "--project", dir, "--builtins", "none", "--transcript", notes)
	if code != 1 || !strings.Contains(stderr, "does not look like a transcript") || len(*reqs) != 0 {
		t.Errorf("exit %d after %d requests; stderr:\n%s\nwant exit 1 before any request, saying it is no transcript", code, len(*reqs), stderr)
	}
	if got, err := os.ReadFile(notes); err != nil || string(got) != text {
		t.Errorf("the file after the refusal: %q, %v; want it unchanged", got, err)
	}

	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "new.jsonl")
	code, _, stderr = agentRun(t, url, "", "--project", dir, "--builtins", "none", "--resume", empty, "--transcript", other)
	if code != 1 || !strings.Contains(stderr, "it holds no run to resume") {
		t.Errorf("exit %d; stderr:\n%s\nwant the resume refused", code, stderr)
	}
	if _, err := os.Stat(other); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the refusal, %s: %v; want no file made", other, err)
	}
}

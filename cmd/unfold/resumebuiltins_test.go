package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/agent"
)

// TestAgentResumeOtherBuiltins: a transcript of a run that used the
// editor (whose session records the commands run in each environment)
// resumes with other --builtins, or none; the events of environments the
// resumed run has not got are kept, and a later resume with them back
// still has them.
func TestAgentResumeOtherBuiltins(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(dir, "run.jsonl")
	url, _ := fakeEndpoint(t, `call editor {"command":"create notes.md\nfirst line"}`, "Done.")
	if code, _, stderr := agentRun(t, url, "write notes", "--project", dir, "--transcript", tpath); code != 0 {
		t.Fatalf("run: exit %d; stderr:\n%s", code, stderr)
	}
	sessionLog := func() string {
		f, err := os.Open(tpath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err := agent.ReadTranscript(f)
		if err != nil {
			t.Fatal(err)
		}
		return tr.SessionLog()
	}
	saved := sessionLog()
	for _, typ := range []string{`"type":"envs.command_used"`, `"type":"orchestrator.command_executed"`} {
		if !strings.Contains(saved, typ) {
			t.Fatalf("saved session log lacks %s:\n%s", typ, saved)
		}
	}
	for _, builtins := range []string{"none", "bash", "all"} {
		url, _ := fakeEndpoint(t, "Resumed.")
		code, stdout, stderr := agentRun(t, url, "go on", "--project", dir, "--builtins", builtins, "--resume", tpath)
		if code != 0 || stdout != "Resumed.\n" {
			t.Fatalf("--builtins %s --resume: exit %d, stdout %q; stderr:\n%s", builtins, code, stdout, stderr)
		}
		if got := sessionLog(); !strings.HasPrefix(got, saved) {
			t.Errorf("--builtins %s: session log after the resume:\n%s\nwant it to begin with the saved one:\n%s", builtins, got, saved)
		}
	}
}

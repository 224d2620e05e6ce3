package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/agent"
)

// agentRun runs unfold agent with args after the endpoint flags and
// returns the exit status, stdout and stderr.
func agentRun(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	all := append([]string{"agent"}, args...)
	all = append(all, "--base-url", url, "--model", "m")
	code := run(all, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// helpRun runs unfold agent in dir, recording to tpath: the model calls
// help, then answers.
func helpRun(t *testing.T, dir, tpath, answer string) {
	t.Helper()
	url, _ := fakeEndpoint(t, `call help {"query":"files"}`, answer)
	if code, _, stderr := agentRun(t, url, "look around", "--project", dir, "--builtins", "none", "--transcript", tpath); code != 0 {
		t.Fatalf("run: exit %d; stderr:\n%s", code, stderr)
	}
}

// requestText returns the contents of a request's messages, joined.
func requestText(req map[string]any) string {
	var b strings.Builder
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		s, _ := m.(map[string]any)["content"].(string)
		b.WriteString(s)
		b.WriteString("\n")
	}
	return b.String()
}

// toolResults returns the tool messages of a request by call ID.
func toolResults(req map[string]any) map[string]string {
	out := map[string]string{}
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["role"] == "tool" {
			id, _ := mm["tool_call_id"].(string)
			out[id], _ = mm["content"].(string)
		}
	}
	return out
}

// TestAgentResumeLargeTranscript: a transcript over 64 MiB, the limit of
// one line, is read for --resume: the limit bounds lines, not the file.
// (The resume itself is the same as for any other transcript: the tests
// below run it.)
func TestAgentResumeLargeTranscript(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(dir, "run.jsonl")
	helpRun(t, dir, tpath, "All done.")
	// Ten more turns of 7 MB each, as follow-ups that resumed it would add.
	f, err := os.OpenFile(tpath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	big := strings.Repeat("x", 7<<20)
	for i := range 10 {
		role := agent.RoleUser
		if i%2 == 1 {
			role = agent.RoleAssistant
		}
		if err := enc.Encode(agent.Record{Kind: agent.KindMessage, Time: time.Now(), Message: &agent.Message{Role: role, Content: big}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(tpath); err != nil || fi.Size() <= agent.MaxTranscriptLine {
		t.Fatalf("transcript: %v, %d bytes; want over %d", err, fi.Size(), agent.MaxTranscriptLine)
	}
	var stderr bytes.Buffer
	rf, err := os.Open(tpath)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	tr, err := readResume(rf, tpath, &stderr)
	if err != nil {
		t.Fatalf("--resume of %s: %v", tpath, err)
	}
	large := 0
	for _, m := range tr.Messages() {
		if m.Content == big {
			large++
		}
	}
	if large != 10 || tr.Answer() != "All done." {
		t.Errorf("read back: %d of the 10 large turns, answer %q", large, tr.Answer())
	}
}

// TestAgentTranscriptUnwritable: a transcript that cannot be written stops
// the run before the model is called.
func TestAgentTranscriptUnwritable(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	url, reqs := fakeEndpoint(t, `call help {"query":"files"}`, "All done.")
	code, _, stderr := agentRun(t, url, "look around", "--project", t.TempDir(), "--builtins", "none", "--transcript", "/dev/full")
	if code != 1 || !strings.Contains(stderr, "no space left on device; the run stops so that nothing goes unrecorded") {
		t.Errorf("exit %d; stderr:\n%s\nwant exit 1 and the transcript's error", code, stderr)
	}
	if len(*reqs) != 0 {
		t.Errorf("requests: got %d, want none", len(*reqs))
	}
}

// TestAgentTwoRunsOneTranscript: two runs appended to one transcript
// resume as the last one.
func TestAgentTwoRunsOneTranscript(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(dir, "run.jsonl")
	for _, task := range []string{"task one", "task two"} {
		url, _ := fakeEndpoint(t, `call bash {"command":"echo hi"}`, "Done.")
		if code, _, stderr := agentRun(t, url, task, "--project", dir, "--builtins", "bash", "--transcript", tpath, "--max-steps", "2"); code != 0 {
			t.Fatalf("%s: exit %d; stderr:\n%s", task, code, stderr)
		}
	}
	url, reqs := fakeEndpoint(t, "Resumed.")
	code, stdout, stderr := agentRun(t, url, "and then?", "--project", dir, "--builtins", "bash", "--resume", tpath)
	if code != 0 || stdout != "Resumed.\n" {
		t.Fatalf("resume: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if text := requestText((*reqs)[0]); !strings.Contains(text, "task two") || strings.Contains(text, "task one") {
		t.Errorf("the resumed request should continue the second run only:\n%s", text)
	}
}

// TestAgentResumeCutShort: a transcript whose last line a stopped run cut
// short resumes without it, and the file resumes again afterwards; so
// does one cut just before its last newline.
func TestAgentResumeCutShort(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(dir, "run.jsonl")
	helpRun(t, dir, tpath, "All done.")
	data, err := os.ReadFile(tpath)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	lines := bytes.Count(data, []byte("\n"))
	for _, tt := range []struct {
		name string
		cut  []byte
		note string
	}{
		{"mid-line", data[:last+20], "line " + strconv.Itoa(lines) + " was cut short (the run stopped while writing it); resuming without it"},
		{"before the newline", data[:len(data)-1], ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(tpath, tt.cut, 0o644); err != nil {
				t.Fatal(err)
			}
			for i, note := range []string{tt.note, ""} {
				url, _ := fakeEndpoint(t, "Resumed.")
				code, stdout, stderr := agentRun(t, url, "go on", "--project", dir, "--builtins", "none", "--resume", tpath)
				if code != 0 || stdout != "Resumed.\n" || !strings.Contains(stderr, note) || (note == "" && strings.Contains(stderr, "cut short")) {
					t.Fatalf("resume %d: exit %d, stdout %q; stderr:\n%s\nwant %q in it", i+1, code, stdout, stderr, note)
				}
			}
			f, err := os.Open(tpath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if tr, err := agent.ReadTranscript(f); err != nil || tr.Incomplete != 0 {
				t.Errorf("the transcript after two resumes: %v, %+v", err, tr)
			}
		})
	}
}

// TestAgentBinaryKilledMidStep: unfold agent killed with SIGKILL while the
// second command of a step runs. The resumed run gets the first command's
// result and its session event, and is told that the second may have
// taken effect: it did.
func TestAgentBinaryKilledMidStep(t *testing.T) {
	dir := t.TempDir()
	tpath := filepath.Join(t.TempDir(), "run.jsonl")
	url, _ := fakeEndpoint(t, `call bash {"command":"echo one >> log.txt; echo wrote one"}`+"\n"+`call bash {"command":"echo two >> log.txt; sleep 30"}`, "not reached")
	cmd := exec.Command(binary, "agent", "log two lines", "--project", dir, "--builtins", "bash", "--base-url", url, "--model", "m", "--transcript", tpath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(got) == "one\ntwo\n" {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the second command never ran; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	data, err := os.ReadFile(tpath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"kind":"session"`)) || !bytes.Contains(data, []byte(`orchestrator.command_executed`)) {
		t.Errorf("the killed run's transcript holds no session event of the finished command:\n%s", data)
	}
	url2, reqs := fakeEndpoint(t, "Checked.")
	code, stdout, errText := agentRun(t, url2, "", "--project", dir, "--builtins", "bash", "--resume", tpath)
	if code != 0 || stdout != "Checked.\n" {
		t.Fatalf("resume: exit %d, stdout %q; stderr:\n%s", code, stdout, errText)
	}
	results := toolResults((*reqs)[0])
	if got := results["call0"]; !strings.Contains(got, "wrote one") {
		t.Errorf("the finished call: got %q, want its output", got)
	}
	if got := results["call0_1"]; !strings.Contains(got, "may have taken effect") || strings.Contains(got, "did not run") {
		t.Errorf("the call running when killed: got %q, want it said to have maybe taken effect", got)
	}
}

// TestAgentBinaryAnswerKept: a transcript that fills up at the run's last
// record (here a file size limit) ends the run with an error, and the
// answer the model gave is still printed.
func TestAgentBinaryAnswerKept(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed; the test limits the file size with ulimit")
	}
	answer := strings.Repeat("The answer. ", 150) // longer than a 512-byte block
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.jsonl")
	helpRun(t, dir, ref, answer)
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	end := len(data) - (bytes.LastIndexByte(data[:len(data)-1], '\n') + 1)
	// Room for every record but the end record, which holds the answer
	// again; 100 bytes spare for timings of other lengths.
	blocks := (len(data)-end+100)/512 + 1
	if blocks*512 >= len(data)-100 {
		t.Fatalf("no room to cut the end record: %d bytes, the end record %d", len(data), end)
	}
	url2, _ := fakeEndpoint(t, `call help {"query":"files"}`, answer)
	cmd := exec.Command("sh", "-c", `ulimit -f `+strconv.Itoa(blocks)+` && exec "$0" "$@"`, binary, "agent", "look around", "--project", dir, "--builtins", "none",
		"--base-url", url2, "--model", "m", "--transcript", filepath.Join(dir, "run.jsonl"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "the run stops so that nothing goes unrecorded") {
		t.Errorf("exit %d; stderr:\n%s\nwant exit 1 and the transcript's error", code, stderr.String())
	}
	if stdout.String() != answer+"\n" {
		t.Errorf("stdout: got %q, want the answer", stdout.String())
	}
}

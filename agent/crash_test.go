package agent_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/internal/scripted"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// diskWriter is a transcript file as a process killed with SIGKILL leaves
// it: after kill, nothing more reaches it.
type diskWriter struct {
	mu     sync.Mutex // guards buf and killed
	buf    bytes.Buffer
	killed bool
}

func (w *diskWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.killed {
		w.buf.Write(p)
	}
	return len(p), nil
}

func (w *diskWriter) kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.killed = true
}

func (w *diskWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// crashTool has an effect (a line in dir/log.txt), then the process dies
// while it runs: the transcript gets nothing more and the run stops.
func crashTool(dir string, w *diskWriter, cancel context.CancelFunc) *tools.Tool {
	return tools.MustNew("crash", "Appends to log.txt.", func(context.Context, tools.Context, struct{}) (string, error) {
		f, err := os.OpenFile(filepath.Join(dir, "log.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		_, err = f.WriteString("two\n")
		f.Close()
		w.kill()
		cancel()
		return "", errors.Join(err, errors.New("killed"))
	})
}

// bashAgent is an agent with a real bash in dir and a fresh session.
func bashAgent(t *testing.T, dir string, m agent.Model, opts ...agent.Option) (*agent.Agent, *session.Session) {
	t.Helper()
	o, sess := bashOrchestrator(t, dir)
	p := prompt.MustNew("test", "crash", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work."})).MustBind()
	a, err := agent.New(m, p, append([]agent.Option{agent.WithSession(sess), agent.WithOrchestrator(o)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return a, sess
}

// answersAfter returns, for each assistant message with tool calls, the
// IDs of its calls and the results of the tool messages right after it.
func answersAfter(msgs []map[string]any) (calls [][]string, results []map[string]string) {
	for i, m := range msgs {
		tcs, _ := m["tool_calls"].([]any)
		if m["role"] != "assistant" || len(tcs) == 0 {
			continue
		}
		var ids []string
		for _, tc := range tcs {
			id, _ := tc.(map[string]any)["id"].(string)
			ids = append(ids, id)
		}
		got := map[string]string{}
		for _, n := range msgs[i+1:] {
			if n["role"] != "tool" {
				break
			}
			id, _ := n["tool_call_id"].(string)
			got[id], _ = n["content"].(string)
		}
		calls, results = append(calls, ids), append(results, got)
	}
	return calls, results
}

// TestResumeAfterKillMidStep: a process killed while the second call of a
// step runs leaves a transcript that holds the first call's result and
// session events; the resumed run gets them, and is told that the second
// call may have taken effect, not that it did not run.
func TestResumeAfterKillMidStep(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var disk diskWriter
	srv := scripted.New(t,
		scripted.Calls(call("c1", "bash", `{"command":"echo one >> log.txt; echo wrote one"}`), call("c2", "crash", `{}`)),
		scripted.Text("not reached"),
	)
	a, _ := bashAgent(t, dir, newModel(t, srv), agent.WithTranscript(&disk), agent.WithTools(crashTool(dir, &disk, cancel)))
	if _, err := a.Run(ctx, "log two lines"); err == nil {
		t.Fatal("the killed run ended without an error")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(got) != "one\ntwo\n" {
		t.Fatalf("log.txt: got %q, want both calls' lines", got)
	}
	tr, err := agent.ReadTranscript(bytes.NewReader(disk.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := scripted.New(t, scripted.Text("done"))
	b, sess := bashAgent(t, dir, newModel(t, srv2))
	if _, err := b.Resume(context.Background(), tr, ""); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, e := range sess.Events() {
		if ce, ok := e.Event.(orchestrator.CommandExecuted); ok {
			cmds = append(cmds, ce.Command)
		}
	}
	if len(cmds) != 1 || cmds[0] != "echo one >> log.txt; echo wrote one" {
		t.Errorf("replayed commands: got %q, want the finished call's", cmds)
	}
	calls, results := answersAfter(srv2.Requests()[0].Messages)
	if len(calls) != 1 {
		t.Fatalf("replies with calls: got %d, want 1", len(calls))
	}
	if got := results[0]["c1"]; !strings.Contains(got, "wrote one") {
		t.Errorf("c1 (finished): got %q, want its real result", got)
	}
	if got := results[0]["c2"]; !strings.Contains(got, "was running when the run stopped") || !strings.Contains(got, "may have taken effect") {
		t.Errorf("c2 (running when killed): got %q, want it said to have maybe taken effect", got)
	}
}

// crashThenResume runs replies with bash and the crash tool, which kills
// the run, then resumes its transcript; it returns the calls and results
// of the resumed run's first request (see answersAfter).
func crashThenResume(t *testing.T, replies ...scripted.Reply) (calls [][]string, results []map[string]string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var disk diskWriter
	srv := scripted.New(t, replies...)
	a, _ := bashAgent(t, dir, newModel(t, srv), agent.WithTranscript(&disk), agent.WithTools(crashTool(dir, &disk, cancel)))
	_, _ = a.Run(ctx, "go")
	tr, err := agent.ReadTranscript(bytes.NewReader(disk.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := scripted.New(t, scripted.Text("done"))
	b, _ := bashAgent(t, dir, newModel(t, srv2))
	if _, err := b.Resume(context.Background(), tr, ""); err != nil {
		t.Fatal(err)
	}
	return answersAfter(srv2.Requests()[0].Messages)
}

// TestResumeReusedCallIDs: an endpoint that numbers calls per reply
// (call_0 in every reply) gets a new ID for a call that repeats one of an
// earlier reply, and every call is answered right after the reply that
// made it.
func TestResumeReusedCallIDs(t *testing.T) {
	calls, results := crashThenResume(t,
		scripted.Calls(call("call_0", "bash", `{"command":"echo first"}`)),
		scripted.Calls(call("call_0", "crash", `{}`)))
	if want := [][]string{{"call_0"}, {"call_0_1"}}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls: got %q, want %q", calls, want)
	}
	if got := results[0]["call_0"]; !strings.Contains(got, "first") {
		t.Errorf("first reply's call_0: got %q, want the output of echo first", got)
	}
	if got, ok := results[1]["call_0_1"]; !ok || !strings.Contains(got, "may have taken effect") {
		t.Errorf("second reply's call_0_1: got %q (answered %v), want it answered as maybe done", got, ok)
	}
}

// TestResumeTextActionKilled: in text-action mode, an action running when
// the process was killed is answered with an observation that says it may
// have taken effect.
func TestResumeTextActionKilled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var disk diskWriter
	srv := scripted.New(t, scripted.Text(`{"tool": "crash", "input": {}}`))
	a, _ := bashAgent(t, dir, newModel(t, srv), agent.WithTranscript(&disk), agent.WithTools(crashTool(dir, &disk, cancel)), agent.WithActions(agent.ActionsText))
	_, _ = a.Run(ctx, "go")
	tr, err := agent.ReadTranscript(bytes.NewReader(disk.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := scripted.New(t, scripted.Text(`{"final": "done"}`))
	b, _ := bashAgent(t, dir, newModel(t, srv2), agent.WithTools(crashTool(dir, &disk, cancel)), agent.WithActions(agent.ActionsText))
	if _, err := b.Resume(context.Background(), tr, ""); err != nil {
		t.Fatal(err)
	}
	msgs := srv2.Requests()[0].Messages
	got := ""
	for i, m := range msgs[:len(msgs)-1] {
		if m["role"] == "assistant" {
			got, _ = msgs[i+1]["content"].(string)
		}
	}
	if !strings.HasPrefix(got, "Observation:") || !strings.Contains(got, "may have taken effect") {
		t.Errorf("the message after the action: got %q, want an observation that the action may have taken effect", got)
	}
}

// TestResumeLastRun: two fresh runs written to one transcript resume as
// the last one: its conversation and its session.
func TestResumeLastRun(t *testing.T) {
	dir := t.TempDir()
	var disk diskWriter
	for _, task := range []string{"task one", "task two"} {
		srv := scripted.New(t, scripted.Calls(call("c1", "bash", `{"command":"echo hi"}`)), scripted.Text("done: "+task))
		a, _ := bashAgent(t, dir, newModel(t, srv), agent.WithTranscript(&disk))
		if _, err := a.Run(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := agent.ReadTranscript(bytes.NewReader(disk.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.New(t, scripted.Text("continued"))
	b, sess := bashAgent(t, dir, newModel(t, srv))
	if _, err := b.Resume(context.Background(), tr, "and then?"); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Bodies()[0])
	if !strings.Contains(body, "task two") || strings.Contains(body, "task one") {
		t.Errorf("the resumed request should hold the second run only; got %s", body)
	}
	if n := sess.Seq(); n == 0 || n > 2 {
		t.Errorf("replayed session events: got %d, want the second run's", n)
	}
}

// TestResumeLastRunNoEvents: the last run recorded no session event (it
// answered at once), so there is no session to replay: the first run's
// events are not its.
func TestResumeLastRunNoEvents(t *testing.T) {
	dir := t.TempDir()
	var disk diskWriter
	for _, reply := range [][]scripted.Reply{
		{scripted.Calls(call("c1", "bash", `{"command":"echo hi"}`)), scripted.Text("done")},
		{scripted.Text("done at once")},
	} {
		a, _ := bashAgent(t, dir, newModel(t, scripted.New(t, reply...)), agent.WithTranscript(&disk))
		if _, err := a.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
	}
	for _, read := range []func(io.Reader) (*agent.Transcript, error){agent.ReadTranscript, agent.ReadForResume} {
		tr, err := read(bytes.NewReader(disk.bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if log := tr.SessionLog(); strings.Contains(log, "echo hi") || strings.Contains(log, `"seq":1,`) && strings.Contains(log, "bash") {
			t.Errorf("the second run's session log holds the first run's events:\n%s", log)
		}
	}
}

// TestReadTranscriptCutShort: a last line cut short by a run that stopped
// while writing it is left out and named; a bad line elsewhere is still an
// error.
func TestReadTranscriptCutShort(t *testing.T) {
	var disk diskWriter
	srv := scripted.New(t, scripted.Calls(call("c1", "bash", `{"command":"echo hi"}`)), scripted.Text("done"))
	a, _ := bashAgent(t, t.TempDir(), newModel(t, srv), agent.WithTranscript(&disk))
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	full := disk.bytes()
	lines := bytes.Count(full, []byte("\n"))
	lastStart := bytes.LastIndexByte(full[:len(full)-1], '\n') + 1
	cut := full[:lastStart+10]
	tr, err := agent.ReadTranscript(bytes.NewReader(cut))
	if err != nil {
		t.Fatalf("a cut last line: %v", err)
	}
	if tr.Incomplete != lines || tr.Complete != int64(lastStart) {
		t.Errorf("incomplete line, complete bytes: got %d, %d, want %d, %d", tr.Incomplete, tr.Complete, lines, lastStart)
	}
	if len(tr.Records) != lines-1 {
		t.Errorf("records: got %d, want %d", len(tr.Records), lines-1)
	}
	for name, data := range map[string][]byte{
		"cut line with newline":  append(bytes.Clone(cut), '\n'),
		"cut line in the middle": append(bytes.Clone(full[:lastStart+10]), append([]byte("\n"), full[lastStart:]...)...),
	} {
		for _, read := range []func(io.Reader) (*agent.Transcript, error){agent.ReadTranscript, agent.ReadForResume} {
			if _, err := read(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "only the last line may be cut short") {
				t.Errorf("%s: got %v, want an error naming the line", name, err)
			}
		}
	}
}

// failWriter fails every write from the first holding after.
type failWriter struct {
	after  string
	failed bool
	buf    bytes.Buffer
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.failed || bytes.Contains(p, []byte(w.after)) {
		w.failed = true
		return 0, errors.New("no space left on device")
	}
	return w.buf.Write(p)
}

// TestTranscriptWriteFails: the run stops at the first record it cannot
// write, before anything more runs, and keeps an answer the model gave.
func TestTranscriptWriteFails(t *testing.T) {
	tests := []struct {
		name          string
		after         string
		requests, ran int
		answer        string
	}{
		{"first record", `"kind":"run"`, 0, 0, ""},
		{"call record", `"kind":"call"`, 1, 0, ""},
		{"after a call", `"kind":"tool"`, 1, 1, ""},
		{"end record", `"kind":"end"`, 2, 1, "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := 0
			noop := tools.MustNew("noop", "Does nothing.", func(context.Context, tools.Context, struct{}) (string, error) {
				ran++
				return "ok", nil
			})
			srv := scripted.New(t, scripted.Calls(call("c1", "noop", `{}`)), scripted.Text("done"))
			p := prompt.MustNew("test", "fail", section.New(section.Spec[section.None]{Key: "task", Title: "Task", Body: "Work."})).MustBind()
			w := &failWriter{after: tt.after}
			a, err := agent.New(newModel(t, srv), p, agent.WithTools(noop), agent.WithTranscript(w))
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), "go")
			if err == nil || !strings.Contains(err.Error(), "no space left on device; the run stops so that nothing goes unrecorded") {
				t.Errorf("error: got %v, want the transcript's", err)
			}
			if got := len(srv.Requests()); got != tt.requests || ran != tt.ran {
				t.Errorf("requests, calls run: got %d, %d, want %d, %d", got, ran, tt.requests, tt.ran)
			}
			if res == nil || res.Answer != tt.answer {
				t.Errorf("answer: got %+v, want %q", res, tt.answer)
			}
		})
	}
}

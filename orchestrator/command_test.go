package orchestrator_test

import (
	"context"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// TestFailedCommandStaysRecorded: a command that fails in a real shell is
// a failed call of the command tool, so the call changes nothing of its
// own in the session; but the command did run, and the orchestrator's
// record of it (and the usage it counts) stays, before the failure record.
func TestFailedCommandStaysRecorded(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := bash.New(bash.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Register("bash", sh); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	tool, err := o.CommandTool("bash")
	if err != nil {
		t.Fatal(err)
	}
	tc := tools.Context{Session: o.Session()}
	ctx := context.Background()
	if res, err := tool.Call(ctx, tc, []byte(`{"command":"echo fine"}`)); err != nil || !res.Success {
		t.Fatalf("echo: got %+v, %v", res, err)
	}
	res, err := tool.Call(ctx, tc, []byte(`{"command":"echo broken >&2; exit 3"}`))
	if err != nil || res.Success || !strings.Contains(res.Message, "broken") {
		t.Fatalf("failing command: got %+v, %v; want a failed result with the output", res, err)
	}

	var got []string
	for _, r := range sess.Events() {
		switch e := r.Event.(type) {
		case orchestrator.CommandExecuted:
			got = append(got, r.Type+" "+e.Command+" "+map[bool]string{true: "ok", false: "failed"}[e.Success])
		case tools.CallFailed:
			got = append(got, r.Type+" "+e.Tool)
		default:
			got = append(got, r.Type)
		}
	}
	want := []string{
		orchestrator.EventCommandExecuted + " echo fine ok",
		orchestrator.EventCommandExecuted + " echo broken >&2; exit 3 failed",
		tools.EventCallFailed + " bash",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := orchestrator.GetUsage(sess).Count("bash"); n != 2 {
		t.Errorf("usage of bash: got %d, want 2 (the failed command ran)", n)
	}
	var log strings.Builder
	if err := sess.WriteLog(&log); err != nil {
		t.Errorf("write log: %v", err)
	}
}

package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
)

func mustNew(t testing.TB, opts ...Option) *Orchestrator {
	t.Helper()
	o, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestRegisterNames(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"bash", ""},
		{"_private", ""},
		{"Env2", ""},
		{"a_b_c", ""},
		{"", `orchestrator: register: invalid environment name "": use an identifier (letters, digits and underscores, not starting with a digit)`},
		{"2fast", `orchestrator: register: invalid environment name "2fast": use an identifier (letters, digits and underscores, not starting with a digit)`},
		{"my-env", `orchestrator: register: invalid environment name "my-env": use an identifier (letters, digits and underscores, not starting with a digit)`},
		{"a.b", `orchestrator: register: invalid environment name "a.b": use an identifier (letters, digits and underscores, not starting with a digit)`},
		{"héllo", `orchestrator: register: invalid environment name "héllo": use an identifier (letters, digits and underscores, not starting with a digit)`},
		{"orchestrator", `orchestrator: register: invalid environment name "orchestrator": the name is reserved for the orchestrator's own screen`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t)
			err := o.Register(tt.name, &testEnv{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("got error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestRegisterConflicts(t *testing.T) {
	tests := []struct {
		name    string
		do      func(o *Orchestrator) error
		wantErr string
	}{
		{"duplicate", func(o *Orchestrator) error {
			_ = o.Register("a", &testEnv{})
			return o.Register("a", &testEnv{})
		}, "orchestrator: register a: an environment with that name is already registered"},
		{"nil env", func(o *Orchestrator) error { return o.Register("a", nil) }, "orchestrator: register a: nil environment"},
		{"after close", func(o *Orchestrator) error {
			_ = o.Close()
			return o.Register("a", &testEnv{})
		}, "orchestrator: register a: orchestrator is closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(mustNew(t))
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestExecute(t *testing.T) {
	tests := []struct {
		name    string
		envs    []string
		env     string
		command string
		want    envs.Response
	}{
		{"echo", []string{"echo"}, "echo", "hi", envs.Response{Output: "echo: hi", Success: true}},
		{"failed command", []string{"echo"}, "echo", "fail", envs.Response{Output: "echo: fail", Success: false}},
		{"empty command", []string{"echo"}, "echo", "", envs.Response{Output: "echo: ", Success: true}},
		{"unknown", []string{"echo", "boom", "broken"}, "nope", "ls", envs.Response{Output: "Unknown environment: nope\nAvailable: boom, broken, echo", Success: false}},
		{"unknown with none registered", nil, "bash", "ls", envs.Response{Output: "Unknown environment: bash\nAvailable: none; no environment is loaded (a spec file that failed to load is named on the orchestrator's screen)", Success: false}},
		{"error", []string{"broken"}, "broken", "x", envs.Response{Output: "Environment error in broken:\ndisk on fire", Success: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t)
			for _, n := range tt.envs {
				e, _ := catalogue(n)
				if err := o.Register(n, e); err != nil {
					t.Fatal(err)
				}
			}
			got := o.Execute(context.Background(), tt.env, tt.command).Response
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestExecutePanic(t *testing.T) {
	o := mustNew(t)
	boom, _ := catalogue("boom")
	echo, _ := catalogue("echo")
	_ = o.Register("boom", boom)
	_ = o.Register("echo", echo)
	res := o.Execute(context.Background(), "boom", "x")
	if res.Response.Success {
		t.Errorf("got success true, want false")
	}
	out := res.Response.Output
	for _, want := range []string{"Environment error in boom:\npanic: kaboom\n\ngoroutine ", "envs_test.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("got output %q, want it to contain %q", out, want)
		}
	}
	for _, unwanted := range []string{"runtime/debug.Stack", "orchestrator.runCommand", "testing.tRunner"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("got output %q, want the stack to hold only the environment's frames, not %s", out, unwanted)
		}
	}
	// The orchestrator keeps working.
	if got := o.Execute(context.Background(), "echo", "after").Response; got != (envs.Response{Output: "echo: after", Success: true}) {
		t.Errorf("after a panic: got %+v, want the echo", got)
	}
}

func TestScreens(t *testing.T) {
	o := mustNew(t, WithMaxLines(3))
	for _, n := range []string{"echo", "tall", "broken", "screenpanic"} {
		e, _ := catalogue(n)
		_ = o.Register(n, e)
	}
	got := o.Execute(context.Background(), "echo", "hi").Screens
	want := map[string]envs.Screen{
		"echo":   {Content: "Echo environment: every command is echoed back.\nLast command: hi", MaxLines: 3},
		"tall":   {Content: "line 1\nline 2\nline 3\nline 4\n[... 8 more lines cut: this screen shows at most 5 lines]", MaxLines: 5},
		"broken": {Content: "[Error getting screen from broken:\nscreen broke]", MaxLines: 10},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("screen %s: got %+v, want %+v", name, got[name], w)
		}
	}
	sp := got["screenpanic"]
	if !strings.HasPrefix(sp.Content, "[Error getting screen from screenpanic:\npanic: screen exploded\n\ngoroutine ") || sp.MaxLines != 10 || lineCount(sp.Content) > 10 {
		t.Errorf("screen screenpanic: got %+v, want the panic trace cut to 10 lines", sp)
	}
	if len(got) != 4 {
		t.Errorf("got %d screens, want 4", len(got))
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		maxLines int
		want     string
	}{
		{"empty", "", 3, ""},
		{"fits", "a\nb\nc", 3, "a\nb\nc"},
		{"fits with final newline", "a\nb\nc\n", 3, "a\nb\nc\n"},
		{"one over", "a\nb\nc\nd", 3, "a\nb\n[... 2 more lines cut: this screen shows at most 3 lines]"},
		{"many over", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 4, "1\n2\n3\n[... 7 more lines cut: this screen shows at most 4 lines]"},
		{"one line allowed", "a\nb", 1, "[... 2 more lines cut: this screen shows at most 1 lines]"},
		{"zero counts as one", "a\nb", 0, "[... 2 more lines cut: this screen shows at most 1 lines]"},
		{"blank lines count", "\n\n\n\n", 2, "\n[... 3 more lines cut: this screen shows at most 2 lines]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Truncate(tt.content, tt.maxLines); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTruncateBytes(t *testing.T) {
	// One huge line of multi-byte characters: cut at a character boundary.
	content := strings.Repeat("é", maxScreenBytes)
	got := Truncate(content, 5)
	body, notice, ok := strings.Cut(got, "\n[... ")
	if !ok {
		t.Fatalf("got %q..., want a byte notice", got[:40])
	}
	if len(body) > maxScreenBytes || !strings.HasPrefix(content, body) {
		t.Errorf("got a body of %d bytes, want a prefix of at most %d", len(body), maxScreenBytes)
	}
	wantNotice := fmt.Sprintf("%d more bytes cut: this screen shows at most %d bytes]", len(content)-len(body), maxScreenBytes)
	if notice != wantNotice {
		t.Errorf("got notice %q, want %q", notice, wantNotice)
	}
}

func TestCommandExecutedEvent(t *testing.T) {
	sess := session.New()
	o := mustNew(t, WithSession(sess))
	echo, _ := catalogue("echo")
	boom, _ := catalogue("boom")
	_ = o.Register("echo", echo)
	_ = o.Register("boom", boom)
	ctx := context.Background()
	o.Execute(ctx, "echo", "one")
	o.Execute(ctx, "echo", "fail")
	o.Execute(ctx, "boom", "x")
	o.Execute(ctx, "nope", "y") // unknown: not an executed command
	huge := strings.Repeat("z", maxEventCommand+10)
	o.Execute(ctx, "echo", huge)

	var got []CommandExecuted
	for _, r := range sess.Events() {
		if r.Type != EventCommandExecuted {
			t.Errorf("got event type %q, want %q", r.Type, EventCommandExecuted)
		}
		e := r.Event.(CommandExecuted)
		if e.Duration <= 0 {
			t.Errorf("event %d: got duration %v, want > 0", r.Seq, e.Duration)
		}
		e.Duration = 0
		got = append(got, e)
	}
	want := []CommandExecuted{
		{Environment: "echo", Command: "one", Success: true},
		{Environment: "echo", Command: "fail", Success: false},
		{Environment: "boom", Command: "x", Success: false},
		{Environment: "echo", Command: strings.Repeat("z", maxEventCommand) + "\n[... 10 more bytes]", Success: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got events %+v, want %+v", got, want)
	}
	u := GetUsage(sess)
	for _, c := range []struct {
		env  string
		want int
	}{{"echo", 3}, {"boom", 1}, {"nope", 0}} {
		if n := u.Count(c.env); n != c.want {
			t.Errorf("usage of %s: got %d, want %d", c.env, n, c.want)
		}
	}
	if got := strings.Join(u.Environments(), ","); got != "boom,echo" {
		t.Errorf("got used environments %q, want %q", got, "boom,echo")
	}

	// The log replays into a fresh session with the same usage.
	var log strings.Builder
	if err := sess.WriteLog(&log); err != nil {
		t.Fatal(err)
	}
	fresh := session.New()
	if err := RegisterSession(fresh); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ReplayLog(strings.NewReader(log.String())); err != nil {
		t.Fatal(err)
	}
	if got := GetUsage(fresh).Count("echo"); got != 3 {
		t.Errorf("after replay: got echo usage %d, want 3", got)
	}
}

func TestClose(t *testing.T) {
	o := mustNew(t)
	a := &testEnv{close: func() error { return errors.New("a failed") }}
	b := &testEnv{close: func() error { panic("b panicked") }}
	c := &testEnv{}
	d := &testEnv{close: func() error { return errors.New("d failed") }}
	for name, e := range map[string]*testEnv{"a": a, "b": b, "c": c, "d": d} {
		_ = o.Register(name, e)
	}
	err := o.Close()
	if err == nil {
		t.Fatal("got nil error, want the failures joined")
	}
	msg := err.Error()
	for _, want := range []string{"orchestrator: close a: a failed", "orchestrator: close b: panic: b panicked", "orchestrator: close d: d failed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("got error %q, want it to contain %q", msg, want)
		}
	}
	for name, e := range map[string]*testEnv{"a": a, "b": b, "c": c, "d": d} {
		if n := e.closeCount(); n != 1 {
			t.Errorf("env %s: got %d closes, want 1", name, n)
		}
	}
	if err2 := o.Close(); !errors.Is(err2, err) && err2 != err {
		t.Errorf("second close: got %v, want the same error", err2)
	}
	for name, e := range map[string]*testEnv{"a": a, "b": b, "c": c, "d": d} {
		if n := e.closeCount(); n != 1 {
			t.Errorf("after second close, env %s: got %d closes, want 1", name, n)
		}
	}
	got := o.Execute(context.Background(), "c", "x").Response
	want := envs.Response{Output: "The orchestrator is shut down; no environment accepts commands.", Success: false}
	if got != want {
		t.Errorf("after close: got %+v, want %+v", got, want)
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		wantErr string
	}{
		{"defaults", nil, ""},
		{"zero max lines", []Option{WithMaxLines(0)}, "orchestrator: new: max lines 0: want a positive number"},
		{"negative line bytes", []Option{WithMaxLineBytes(-1)}, "orchestrator: new: max line bytes -1: want a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("got error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestRunClipsQuestion: an environment that passes a program's question
// on whole, however long, reaches the caller with it clipped.
func TestRunClipsQuestion(t *testing.T) {
	o := mustNew(t)
	long := strings.Repeat("é", 100000) + "?"
	err := o.Register("asker", &testEnv{execute: func(context.Context, string) (envs.Response, error) {
		return envs.Response{Output: "asking", Running: true, Waiting: true, Prompt: long}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	got := o.Run(context.Background(), Command{Environment: "asker", Text: "go"}).Response.Prompt
	if want := "…" + strings.Repeat("é", envs.MaxQuestion-1) + "?"; got != want {
		t.Errorf("got a prompt of %d bytes, want %d: the last %d characters after …", len(got), len(want), envs.MaxQuestion)
	}
}

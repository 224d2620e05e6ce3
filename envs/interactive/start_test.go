//go:build linux

package interactive_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/interactive"
)

// neverPrompts is a program that starts and never shows its prompt.
var neverPrompts = interactive.Spec{Command: "sleep 1000", Prompt: `zz> `, Description: "never ready"}

// TestStartFollowsTheCall: the wait for the first prompt is part of the
// command that started the program, under its limits: a hard limit or a
// cancellation stops the program, a soft limit gives control back while it
// starts on, and C-c stops it then; Spec.StartTimeout bounds the start on
// its own.
func TestStartFollowsTheCall(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		name  string
		spec  func(interactive.Spec) interactive.Spec
		call  func(e *interactive.Env) envs.Response
		want  string
		state string // what the screen then says of the program
	}{
		{
			name: "a hard limit stops it",
			call: func(e *interactive.Env) envs.Response {
				ctx, cancel := context.WithTimeout(context.Background(), ms(300))
				defer cancel()
				resp, _ := e.ExecuteLimited(ctx, "hi", envs.Limits{})
				return resp
			},
			want:  "[Timed out: sleep had not shown its prompt yet, so it was stopped and the command was not run. It starts again with the next command.]",
			state: "Status: stopped (stopped while it started)",
		},
		{
			name: "the spec's hard timeout stops it",
			spec: func(s interactive.Spec) interactive.Spec { s.Timeout, s.Hard = ms(300), true; return s },
			call: func(e *interactive.Env) envs.Response {
				resp, _ := e.Execute(context.Background(), "hi")
				return resp
			},
			want:  "[Timed out: sleep had not shown its prompt yet, so it was stopped and the command was not run. It starts again with the next command.]",
			state: "Status: stopped (stopped while it started)",
		},
		{
			name: "cancelling stops it",
			call: func(e *interactive.Env) envs.Response {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(ms(300), cancel)
				resp, _ := e.Execute(ctx, "hi")
				return resp
			},
			want:  "[Cancelled: sleep had not shown its prompt yet, so it was stopped and the command was not run. It starts again with the next command.]",
			state: "Status: stopped (stopped while it started)",
		},
		{
			name: "StartTimeout stops it",
			spec: func(s interactive.Spec) interactive.Spec { s.StartTimeout = ms(300); return s },
			call: func(e *interactive.Env) envs.Response {
				resp, _ := e.Execute(context.Background(), "hi")
				return resp
			},
			want:  `Failed to start sleep: no prompt matching "zz> " within 300ms, the start timeout (StartTimeout); it printed nothing`,
			state: "Status: stopped (did not start)",
		},
		{
			name: "a soft limit returns while it starts on",
			call: func(e *interactive.Env) envs.Response {
				resp, _ := e.ExecuteLimited(context.Background(), "hi", envs.Limits{Until: time.Now().Add(ms(300))})
				return resp
			},
			want:  "[Still starting (the time limit passed): sleep has not shown its prompt yet, after 300ms; it printed nothing. The command is typed once it does. Send an empty command to wait for it, or C-c to stop it.]",
			state: "Starting: no prompt yet",
		},
		{
			name: "C-c stops it while it starts",
			call: func(e *interactive.Env) envs.Response {
				if resp, _ := e.ExecuteLimited(context.Background(), "hi", envs.Limits{Until: time.Now().Add(ms(100))}); !resp.Running {
					t.Errorf("first: got %+v, want it still starting", resp)
				}
				if resp := run(t, e, "text", 30*time.Second); !resp.Running || !strings.Contains(resp.Output, "[sleep is still starting (its prompt has not shown yet), so the text was not typed.") {
					t.Errorf("text while it starts: got %+v, want it refused", resp)
				}
				return run(t, e, "C-c", 30*time.Second)
			},
			want:  "[Interrupted (C-c): sleep had not shown its prompt yet, so it was stopped and the command was not run. It starts again with the next command.]",
			state: "Status: stopped (stopped while it started)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := neverPrompts
			if c.spec != nil {
				spec = c.spec(spec)
			}
			e := newEnv(t, spec)
			resp := c.call(e)
			// The time in the soft limit's note varies with the machine.
			got := regexpTime.ReplaceAllString(resp.Output, "after 300ms;")
			if got != c.want || resp.Success {
				t.Errorf("got {%q, %v}, want {%q, false}", resp.Output, resp.Success, c.want)
			}
			if s, _ := e.Screen(); !strings.Contains(s.Content, c.state) {
				t.Errorf("screen: got %q, want it to say %q", s.Content, c.state)
			}
		})
	}
}

// TestStartThenRun: a command whose program started past the soft limit
// runs once the program shows its prompt, on the next empty command.
func TestStartThenRun(t *testing.T) {
	need(t, "sh", "python3")
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, interactive.Spec{Name: "py", Command: "sh -c 'read x < \"$0\"; exec python3 -i -q' '" + fifo + "'", Prompt: `>>> `, Description: "d"})
	resp, err := e.ExecuteLimited(context.Background(), "6 * 7", envs.Limits{Until: time.Now().Add(200 * time.Millisecond)})
	if err != nil || !resp.Running || !strings.Contains(resp.Output, "[Still starting") {
		t.Fatalf("got %+v, %v; want it still starting", resp, err)
	}
	if err := os.WriteFile(fifo, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want(t, e, "", "42", true)
	want(t, e, "6 * 8", "48", true)
}

// regexpTime matches the time a start took in a note.
var regexpTime = regexp.MustCompile(`after [0-9.]+m?s;`)

// TestInitUnderTheCall gives an init command that never brings the
// prompt back: a call with a soft limit fails the start at that limit,
// saying which init command, instead of waiting for it forever.
func TestInitUnderTheCall(t *testing.T) {
	spec := pythonSpec
	spec.Init = []string{"import time; time.sleep(600)"}
	e := newEnv(t, spec)
	done := make(chan envs.Response, 1)
	go func() {
		resp, _ := e.ExecuteLimited(context.Background(), "1+1", envs.Limits{Until: time.Now().Add(time.Second)})
		// On a loaded machine python3 itself may take longer than the
		// second to start: then wait for it, as the response says to.
		for range 60 {
			if !strings.Contains(resp.Output, "[Still starting (the time limit passed): python3 has not shown its prompt yet") {
				break
			}
			resp, _ = e.ExecuteLimited(context.Background(), "", envs.Limits{Until: time.Now().Add(time.Second)})
		}
		done <- resp
	}()
	select {
	case resp := <-done:
		if want := `init command "import time; time.sleep(600)" did not bring the prompt back within the call's time limit`; !strings.Contains(resp.Output, want) {
			t.Errorf("got %q, want it to say %q", resp.Output, want)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the call waits for the init command")
	}
}

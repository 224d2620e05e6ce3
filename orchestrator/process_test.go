package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/envtest"
	"github.com/unfold-dev/unfold/internal/procs"
)

// newFake returns a process environment running this test binary in the
// given fake-process mode (see fakeProcess).
func newFake(t *testing.T, mode string) *Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProcess(ProcessSpec{Name: "counter", Executable: exe, Env: fakeVars(mode), Description: "Test counter"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func execute(t *testing.T, p *Process, ctx context.Context, cmd string) (envs.Response, string) {
	t.Helper()
	resp, err := p.Execute(ctx, cmd)
	if err != nil {
		return resp, err.Error()
	}
	return resp, ""
}

func TestProcessCommands(t *testing.T) {
	p := newFake(t, "counter")
	if got := p.Summary(); got != "Test counter (not started)" {
		t.Errorf("got summary %q, want %q", got, "Test counter (not started)")
	}
	s, err := p.Screen()
	if want := (envs.Screen{Content: "Test counter\n[not started; it starts with the first command]"}); err != nil || s != want {
		t.Errorf("got screen %+v, %v; want %+v: a screen starts nothing", s, err, want)
	}
	if got := p.Summary(); got != "Test counter (not started)" {
		t.Errorf("after a screen: got summary %q, want %q", got, "Test counter (not started)")
	}
	ctx := context.Background()
	steps := []struct {
		cmd  string
		want envs.Response
	}{
		{"inc", envs.Response{Output: "ok", Success: true}},
		{"inc", envs.Response{Output: "ok", Success: true}},
		{"get", envs.Response{Output: "2", Success: true}},
		{"echo multi\nline ✓", envs.Response{Output: "multi\nline ✓", Success: true}},
		{"nope", envs.Response{Output: "unknown command: nope", Success: false}},
	}
	for _, st := range steps {
		got, errText := execute(t, p, ctx, st.cmd)
		if errText != "" || got != st.want {
			t.Errorf("%q: got %+v (error %q), want %+v", st.cmd, got, errText, st.want)
		}
	}
	if s, _ := p.Screen(); s.Content != "Counter: 2" {
		t.Errorf("got screen %q, want %q", s.Content, "Counter: 2")
	}
	if got := p.Summary(); got != "Test counter (ready)" {
		t.Errorf("got summary %q, want %q", got, "Test counter (ready)")
	}
}

// TestProcessLongQuestion: a question of megabytes is clipped to its end
// in the prompt field and in the note, and the answer still reaches the
// process.
func TestProcessLongQuestion(t *testing.T) {
	p := newFake(t, "counter")
	resp, errText := execute(t, p, context.Background(), "asklong 2000000")
	want := "…" + strings.Repeat("Q", envs.MaxQuestion-1) + "?"
	if errText != "" || !resp.Waiting || resp.Prompt != want {
		t.Fatalf("got %d bytes of prompt %.20q..., waiting %v (error %q); want the question's last %d characters after …", len(resp.Prompt), resp.Prompt, resp.Waiting, errText, envs.MaxQuestion)
	}
	if n := len(resp.Output); n > 2*envs.MaxQuestion+400 {
		t.Errorf("got %d bytes of output, want the note with the clipped question only", n)
	}
	if resp, errText = execute(t, p, context.Background(), "yes"); errText != "" || resp.Output != "got yes" {
		t.Errorf("answer: got %+v (error %q), want got yes", resp, errText)
	}
}

func TestProcessInterruptAnswered(t *testing.T) {
	p := newFake(t, "counter")
	p.Screen() // started, with its SIGINT handler installed
	execute(t, p, context.Background(), "inc")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, errText := execute(t, p, ctx, "sleep")
	want := envs.Response{Output: "interrupted\n[the command timed out; the process answered the interrupt]", Success: false}
	if errText != "" || got != want {
		t.Errorf("got %+v (error %q), want %+v", got, errText, want)
	}
	got, _ = execute(t, p, context.Background(), "get")
	if want := (envs.Response{Output: "1", Success: true}); got != want {
		t.Errorf("after the interrupt: got %+v, want %+v (state kept)", got, want)
	}
}

func TestProcessInterruptKilled(t *testing.T) {
	p := newFake(t, "counter")
	p.grace = 100 * time.Millisecond
	execute(t, p, context.Background(), "inc")
	p.Screen()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	got, errText := execute(t, p, cancelled, "inc")
	want := envs.Response{Output: "[Not run: it was cancelled before it started.]"}
	if errText != "" || got != want {
		t.Errorf("already cancelled: got %+v (error %q), want %+v", got, errText, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, errText = execute(t, p, ctx, "hang")
	want = envs.Response{Output: "The command timed out, and counter did not answer the interrupt within 100ms, so the process was stopped. It restarts on the next command; its state was lost.", Success: false}
	if errText != "" || got != want {
		t.Errorf("got %+v (error %q), want %+v", got, errText, want)
	}
	if s, _ := p.Screen(); s.Content != "Counter: 1\n[the process stopped (it did not answer an interrupt); it restarts on the next command]" {
		t.Errorf("got screen %q, want the last screen and the stop", s.Content)
	}
	if got := p.Summary(); got != "Test counter (stopped)" {
		t.Errorf("got summary %q, want %q", got, "Test counter (stopped)")
	}
	got, _ = execute(t, p, context.Background(), "get")
	want = envs.Response{Output: "[counter had stopped (it did not answer an interrupt); it was restarted and its earlier state was lost.]\n0", Success: true}
	if got != want {
		t.Errorf("after the kill: got %+v, want %+v", got, want)
	}
	got, _ = execute(t, p, context.Background(), "get")
	if want := (envs.Response{Output: "0", Success: true}); got != want {
		t.Errorf("the note appears once: got %+v, want %+v", got, want)
	}
}

func TestProcessFailures(t *testing.T) {
	tests := []struct {
		name      string
		mode      string
		cmd       string
		wantErr   string // the error Execute returns (the orchestrator reports it)
		wantNext  string // the output of "get" afterwards
		setup     func(p *Process)
		wantState string // the screen right after the failure
	}{
		{
			name:     "exits mid-command",
			mode:     "counter",
			cmd:      "exit 3",
			wantErr:  "the process stopped before answering (it ended with exit status 3); it restarts on the next command, and its state was lost",
			wantNext: "[counter had stopped (it ended with exit status 3); it was restarted and its earlier state was lost.]\n0",
		},
		{
			name:     "exits with stderr",
			mode:     "counter",
			cmd:      "stderr oops: config missing",
			wantErr:  "the process stopped before answering (it ended with exit status 4); it restarts on the next command, and its state was lost\nIts stderr ended with:\noops: config missing",
			wantNext: "[counter had stopped (it ended with exit status 4); it was restarted and its earlier state was lost.]\n0",
		},
		{
			name:     "writes a line that is not a reply",
			mode:     "counter",
			cmd:      "garbage",
			wantErr:  `the process wrote a line that is not a protocol reply: "hello from print debugging" (write logs to stderr, not stdout). The process was stopped and restarts on the next command`,
			wantNext: "[counter had stopped (it broke the protocol); it was restarted and its earlier state was lost.]\n0",
		},
		{
			name:     "reply over the limit",
			mode:     "counter",
			cmd:      "big 2000",
			setup:    func(p *Process) { p.maxLine = 1000 },
			wantErr:  "the process sent a reply of 2046 bytes, more than the limit of 1000; the reply was discarded",
			wantNext: "0",
		},
		{
			name:     "error reply",
			mode:     "counter",
			cmd:      "error cannot parse that",
			wantErr:  "the process answered with an error: cannot parse that",
			wantNext: "0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newFake(t, tt.mode)
			if tt.setup != nil {
				tt.setup(p)
			}
			_, errText := execute(t, p, context.Background(), tt.cmd)
			if errText != tt.wantErr {
				t.Errorf("got error %q, want %q", errText, tt.wantErr)
			}
			got, errText := execute(t, p, context.Background(), "get")
			if errText != "" || got.Output != tt.wantNext {
				t.Errorf("next command: got %+v (error %q), want output %q", got, errText, tt.wantNext)
			}
		})
	}
}

func TestProcessStartFailures(t *testing.T) {
	t.Run("exits at start", func(t *testing.T) {
		p := newFake(t, "crash")
		_, errText := execute(t, p, context.Background(), "get")
		want := "the process stopped before answering (it ended with exit status 2); it restarts on the next command, and its state was lost\nIts stderr ended with:\ncrash: missing configuration"
		if errText != want {
			t.Errorf("got error %q, want %q", errText, want)
		}
		s, err := p.Screen()
		if want := "Test counter\n[the process stopped (it ended with exit status 2); it restarts on the next command]"; err != nil || s.Content != want {
			t.Errorf("got screen %q, %v; want %q", s.Content, err, want)
		}
	})
	t.Run("missing executable", func(t *testing.T) {
		p, err := NewProcess(ProcessSpec{Name: "ghost", Executable: "/nonexistent/ghost"})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := p.Execute(context.Background(), "x")
		want := "failed to start ghost (/nonexistent/ghost): fork/exec /nonexistent/ghost: no such file or directory"
		if got.Success || got.Output != want {
			t.Errorf("got %+v, want a failed response %q", got, want)
		}
	})
}

func TestProcessScreenTimeout(t *testing.T) {
	p := newFake(t, "noscreen")
	p.screenTimeout = 100 * time.Millisecond
	if _, errText := execute(t, p, context.Background(), "get"); errText != "" {
		t.Fatal(errText)
	}
	_, err := p.Screen()
	want := "the process did not answer a screen request within 100ms; it was stopped and restarts on the next command"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestProcessScreenWhileRunning(t *testing.T) {
	p := newFake(t, "counter")
	if _, errText := execute(t, p, context.Background(), "get"); errText != "" {
		t.Fatal(errText)
	}
	p.Screen()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan envs.Response)
	go func() {
		r, err := p.Execute(ctx, "sleep")
		if err != nil {
			r.Output = "error: " + err.Error()
		}
		done <- r
	}()
	const want = "Counter: 0\n[a command is running; this screen is from before it]"
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := p.Screen()
		if err != nil {
			t.Fatal(err)
		}
		if s.Content == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got screen %q, never %q", s.Content, want)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if r := <-done; r.Output != "interrupted\n[the command was cancelled; the process answered the interrupt]" {
		t.Errorf("got %+v, want the interrupted reply", r)
	}
}

func TestProcessClose(t *testing.T) {
	tests := []struct{ name, mode string }{
		{"polite", "counter"},
		{"ignores shutdown and SIGTERM", "stubborn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newFake(t, tt.mode)
			p.grace = 100 * time.Millisecond
			execute(t, p, context.Background(), "inc")
			if err := p.Close(); err != nil {
				t.Errorf("got close error %v, want nil", err)
			}
			if err := p.Close(); err != nil {
				t.Errorf("second close: got %v, want nil", err)
			}
			if got, err := p.Execute(context.Background(), "get"); !errors.Is(err, envs.ErrClosed) {
				t.Errorf("after close: got %+v, %v, want an error wrapping envs.ErrClosed", got, err)
			}
			if s, _ := p.Screen(); !strings.HasSuffix(s.Content, "[closed]") {
				t.Errorf("after close: got screen %q, want it marked closed", s.Content)
			}
		})
	}
}

func TestProcessCloseUnstarted(t *testing.T) {
	p := newFake(t, "counter")
	if err := p.Close(); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}

func TestProcessConformance(t *testing.T) {
	envtest.Run(t, func(t *testing.T) envs.Env {
		p := newFake(t, "counter")
		p.spec.Quiet = 500 * time.Millisecond
		p.spec.OutputLimit = 64 << 10
		// Started (by a command: a screen starts nothing) and answering,
		// so its SIGINT handler is installed before the suite interrupts it.
		// On a busy machine the start may outlast the quiet time: the
		// command is waited out, so its reply is not the suite's first.
		resp, errText := execute(t, p, context.Background(), "get")
		for deadline := time.Now().Add(time.Minute); errText == "" && resp.Running && time.Now().Before(deadline); {
			resp, errText = execute(t, p, context.Background(), "")
		}
		if errText != "" || resp.Running {
			t.Fatalf("starting the counter: %s %+v", errText, resp)
		}
		return p
	}, "inc", envtest.WithBlocking("sleep"),
		envtest.WithPhased(func(first, file, second string) string { return "phased " + first + " " + file + " " + second }),
		envtest.WithQuestion(func(q string) string { return "ask " + q }),
		envtest.WithFlood(func(n int) string { return "flood " + strconv.Itoa(n) }),
		envtest.WithDefaultQuiet(500*time.Millisecond), envtest.WithOutputLimit(64<<10))
}

// TestProcessCloseDuringBlockedWrite closes a process that does not read its
// stdin while a command too big for the pipe is being written to it.
func TestProcessCloseDuringBlockedWrite(t *testing.T) {
	p := newFake(t, "deaf")
	p.grace = 100 * time.Millisecond
	done := make(chan string)
	go func() {
		_, errText := execute(t, p, context.Background(), strings.Repeat("x", 1<<20))
		done <- errText
	}()
	// Wait until the command holds the process and has started it: it
	// then writes, or is about to.
	started := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.child != nil
	}
	for {
		if p.run.TryLock() {
			p.run.Unlock() // the command has not taken the process yet
		} else if started() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := p.Close(); err != nil {
		t.Errorf("got close error %v, want nil", err)
	}
	if errText := <-done; !strings.HasPrefix(errText, "cannot send the request to the process") && !strings.HasPrefix(errText, "the process stopped before answering") {
		t.Errorf("got %q, want a failed send or a stopped process", errText)
	}
}

// TestProcessCPULimitNamed: a process its CPU time limit ends says so,
// with the limit, not only the signal.
func TestProcessCPULimitNamed(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProcess(ProcessSpec{Name: "counter", Executable: exe, Env: fakeVars("counter"), Description: "Test counter",
		Resources: procs.Limits{CPUSeconds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, errText := execute(t, p, context.Background(), "spin")
	const want = "the process stopped before answering (it ended with signal: killed: it used up its processor time limit (cpu_seconds, 1 s, counted over the program's whole run))"
	if !strings.HasPrefix(errText, want) {
		t.Errorf("got error %q, want it to start %q", errText, want)
	}
}

// TestProcessLimitsAndEscapees: resource limits from the spec apply to the
// process and what it starts, and a process it started that left its
// process group ends when the environment closes.
func TestProcessLimitsAndEscapees(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := NewProcess(ProcessSpec{Name: "counter", Executable: exe, Env: fakeVars("counter"), Description: "Test counter",
		Dir: dir, Resources: procs.Limits{FileSize: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, errText := execute(t, p, context.Background(), "sh head -c 2000000 /dev/zero > big; echo status $?; wc -c < big")
	if errText != "" || !strings.Contains(got.Output, "status 153") || !strings.Contains(got.Output, "1048576") {
		t.Errorf("a write past the file size limit: got %+v (error %q), want it killed by SIGXFSZ at 1 MiB", got, errText)
	}
	got, _ = execute(t, p, context.Background(), "sh setsid sh -c 'echo $$; exec sleep 1007' </dev/null >pid 2>&1 & for i in $(seq 3000); do [ -s pid ] && break; sleep 0.01; done; cat pid")
	pid, err := strconv.Atoi(strings.TrimSpace(got.Output))
	if err != nil {
		t.Fatalf("got %q, want a pid", got.Output)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); procs.Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d (started with setsid) is still running after Close", pid)
		}
	}
}

// TestProcessTextPlain: a process environment's output, its question and
// its screen reach the model as plain text, as a terminal's output does:
// escape sequences dropped, carriage returns and backspaces applied.
func TestProcessTextPlain(t *testing.T) {
	p := newFake(t, "escapes")
	resp, errText := execute(t, p, context.Background(), "raw")
	if want := "out red\nprogressX2"; errText != "" || resp.Output != want {
		t.Errorf("output: got %q, %q; want %q", resp.Output, errText, want)
	}
	resp, errText = execute(t, p, context.Background(), "raw ask")
	if want := "password?"; errText != "" || resp.Prompt != want {
		t.Errorf("question: got %+v, %q; want the prompt %q", resp, errText, want)
	}
	resp, errText = execute(t, p, context.Background(), "secret")
	if want := "progressX2"; errText != "" || resp.Output != want {
		t.Errorf("after the answer: got %q, %q; want %q", resp.Output, errText, want)
	}
	if _, errText = execute(t, p, context.Background(), "error \x1b[2Jbo\x1b[8mom"); !strings.HasSuffix(errText, "answered with an error: boom") {
		t.Errorf("error: got %q, want the message plain", errText)
	}
	s, err := p.Screen()
	if want := "Zcr  hidden "; err != nil || s.Content != want {
		t.Errorf("screen: got %q, %v; want %q", s.Content, err, want)
	}
}

// TestProcessKilledBetweenCommands: a process killed while no command ran
// is not started again by a screen, which says it stopped; the next
// command starts it again and says the earlier state was lost.
func TestProcessKilledBetweenCommands(t *testing.T) {
	p := newFake(t, "counter")
	ctx := context.Background()
	if got, errText := execute(t, p, ctx, "inc"); errText != "" || got.Output != "ok" {
		t.Fatalf("got %+v (error %q), want ok", got, errText)
	}
	p.mu.Lock()
	c := p.child
	p.mu.Unlock()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.exited
	const want = "Test counter\n[the process stopped (it ended with signal: killed); it restarts on the next command]"
	for i := range 2 {
		if s, err := p.Screen(); err != nil || s.Content != want {
			t.Fatalf("screen %d: got %q, %v; want %q", i, s.Content, err, want)
		}
	}
	if got := p.Summary(); got != "Test counter (stopped)" {
		t.Errorf("got summary %q, want %q: the screen started nothing", got, "Test counter (stopped)")
	}
	got, errText := execute(t, p, ctx, "get")
	if wantOut := "[counter had stopped (it ended with signal: killed); it was restarted and its earlier state was lost.]\n0"; errText != "" || got.Output != wantOut {
		t.Errorf("got %+v (error %q), want output %q", got, errText, wantOut)
	}
}

// TestOnDemandProcessNotStartedByScreens: the screens drawn after every
// command and before every model request start no program: an on-demand
// environment nobody used costs nothing.
func TestOnDemandProcessNotStartedByScreens(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	const script = `import json, os, sys
open("STARTED", "w").write(str(os.getpid()))
for line in sys.stdin:
    if json.loads(line)["type"] == "screen":
        print(json.dumps({"type": "screen", "content": "drawn"}), flush=True)
`
	spec, _ := json.Marshal(map[string]any{"kind": "process", "executable": "python3", "args": []string{"-c", script}, "description": "Heavy tool", "on_demand": true})
	dir := writeProject(t, map[string]string{"heavy.json": string(spec)})
	o := mustNew(t)
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, want := o.Screens()["heavy"].Content, "Heavy tool\n[not started; it starts with the first command]"; got != want {
			t.Errorf("got screen %q, want %q", got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "STARTED")); err == nil {
		t.Errorf("the program was started by drawing screens")
	}
}

// TestNewProcessRefusesUnfoldVariables: a Go caller cannot set the
// variables unfold sets either.
func TestNewProcessRefusesUnfoldVariables(t *testing.T) {
	_, err := NewProcess(ProcessSpec{Name: "p", Executable: "sh", Env: map[string]string{"UNFOLD_PROCS": ""}})
	if want := `orchestrator: new process p: env: variable "UNFOLD_PROCS": unfold sets it (UNFOLD_ENV, UNFOLD_PROCS); use another name`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

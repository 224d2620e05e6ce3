//go:build linux

package interactive_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/internal/procs"
)

// returns runs f and fails the test if it does not return within limit, a
// bound far past what f should take: without it, a call that never
// returns would hold the test until its own timeout.
func returns[T any](t *testing.T, limit time.Duration, f func() T) T {
	t.Helper()
	got := make(chan T, 1)
	go func() { got <- f() }()
	select {
	case v := <-got:
		return v
	case <-time.After(limit):
		t.Fatalf("the call did not return within %v", limit)
		panic("unreachable")
	}
}

// TestLongCommandHonoursLimits: a command whose first line runs for long,
// followed by more text than the terminal holds unread, gives control
// back at a soft limit and at a hard one (with Ctrl-C, dropping what was
// not typed), and C-c reaches the program while the rest waits.
func TestLongCommandHonoursLimits(t *testing.T) {
	command := "import time; time.sleep(10**6)\n" + strings.Repeat("x = 1\n", 6000)
	t.Run("hard", func(t *testing.T) {
		e := newEnv(t, pythonSpec)
		want(t, e, "y = 5", "", true)
		resp := returns(t, time.Minute, func() envs.Response {
			return run(t, e, command, 2*time.Second)
		})
		if resp.Running || !strings.Contains(resp.Output, "sent Ctrl-C") || !strings.Contains(resp.Output, "the rest was not typed") {
			t.Errorf("got %+v, want Ctrl-C and a note that the rest was not typed", resp)
		}
		want(t, e, "y * 2", "10", true)
	})
	t.Run("soft", func(t *testing.T) {
		e := newEnv(t, pythonSpec)
		// Started first, so that the second covers the typing only: a
		// start can take longer on a busy machine.
		want(t, e, "y = 5", "", true)
		resp := returns(t, time.Minute, func() envs.Response {
			r, err := e.ExecuteLimited(context.Background(), command, envs.Limits{Until: time.Now().Add(time.Second)})
			if err != nil {
				t.Error(err)
			}
			return r
		})
		if !resp.Running || !strings.Contains(resp.Output, "typed so far") {
			t.Errorf("got %+v, want Running and how much is typed so far", resp)
		}
		resp = returns(t, time.Minute, func() envs.Response { return run(t, e, envs.Interrupt, time.Minute) })
		if resp.Running || !strings.Contains(resp.Output, "Interrupted") || !strings.Contains(resp.Output, "the rest was not typed") {
			t.Errorf("C-c: got %+v, want it interrupted, the rest not typed", resp)
		}
		want(t, e, "40 + 2", "42", true)
	})
}

// TestRestartEndsTheOldRun: what a run of the program started outside its
// session ends when the program exits and starts again, not at Close only.
func TestRestartEndsTheOldRun(t *testing.T) {
	for _, how := range []string{"import os; os._exit(0)", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, pythonSpec)
			resp := run(t, e, "import subprocess; p = subprocess.Popen(['sleep', '1006'], start_new_session=True); p.pid", 30*time.Second)
			pid, err := strconv.Atoi(resp.Output)
			if err != nil {
				t.Fatalf("got %q, want a pid", resp.Output)
			}
			run(t, e, how, 30*time.Second)
			if got := run(t, e, "1 + 1", 30*time.Second).Output; !strings.Contains(got, "2") {
				t.Fatalf("after the restart: got %q, want 2", got)
			}
			for deadline := time.Now().Add(10 * time.Second); procs.Alive(pid); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("process %d, started by the run that ended, still runs after the restart", pid)
				}
			}
		})
	}
}

// TestOutputBetweenCommands: what the program prints after a command
// ended comes in front of the next response, marked, and bounded.
func TestOutputBetweenCommands(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "printed")
	wait := func(t *testing.T) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(flag); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the late output was never printed")
			}
		}
		// Let the output reader take it from the terminal.
		time.Sleep(200 * time.Millisecond)
		os.Remove(flag)
	}
	t.Run("python", func(t *testing.T) {
		e := newEnv(t, pythonSpec)
		want(t, e, "import threading; threading.Timer(0.2, lambda: (print('LATE-PY', flush=True), open("+strconv.Quote(flag)+", 'w').close())).start()", "", true)
		wait(t)
		want(t, e, "2 + 2", "[Output since the last command:]\nLATE-PY\n4", true)
		want(t, e, "3 + 3", "6", true)
	})
	t.Run("then exits", func(t *testing.T) {
		e := newEnv(t, pythonSpec)
		want(t, e, "import threading, os; threading.Timer(0.2, lambda: (print('LAST-WORDS', flush=True), open("+strconv.Quote(flag)+", 'w').close(), os._exit(3))).start()", "", true)
		wait(t)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if s, _ := e.Screen(); !strings.Contains(s.Content, "running (pid") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the program did not end")
			}
		}
		want(t, e, "6 * 7", "[python3 exited with status 3 after the last command; before, it printed:]\nLAST-WORDS\n[Started python3 again; its state from before was lost.]\n42", true)
		if s, _ := e.Screen(); !strings.Contains(s.Content, "running (pid") {
			t.Errorf("screen: got %q, want it running again", s.Content)
		}
		want(t, e, "1 + 1", "2", true)
	})
	t.Run("node", func(t *testing.T) {
		e := newEnv(t, interactive.Spec{Command: "node --interactive", Prompt: `> `, Description: "Node.js"})
		want(t, e, "setTimeout(() => { console.log('LATE-NODE'); require('fs').writeFileSync("+strconv.Quote(flag)+", '') }, 200); 'scheduled'", "'scheduled'", true)
		wait(t)
		want(t, e, "1 + 1", "[Output since the last command:]\nLATE-NODE\n2", true)
	})
	t.Run("bounded", func(t *testing.T) {
		e := newEnv(t, pythonSpec)
		want(t, e, "import threading; threading.Timer(0.2, lambda: (print('z' * 100000, flush=True), open("+strconv.Quote(flag)+", 'w').close())).start()", "", true)
		wait(t)
		got := run(t, e, "5 * 7", 30*time.Second).Output
		if !strings.HasPrefix(got, "[Output since the last command:]\nzzz") || !strings.HasSuffix(got, "z\n35") || len(got) > 10<<10 {
			t.Errorf("got %d bytes (%q), want at most 10 KiB: the late output cut, then 35", len(got), got)
		}
	})
}

// TestPromptEndingInDollar: a prompt expression anchored at the end with
// `$` cleans multi-line output as the same prompt without it does.
func TestPromptEndingInDollar(t *testing.T) {
	for _, c := range []struct {
		name, command, prompt, input, output string
	}{
		{"sqlite3", "sqlite3", `sqlite> $`, "select 1;\nselect 2;\nselect\n3;", "1\n2\n3"},
		{"sqlite3 z", "sqlite3", `sqlite> \z`, "select 1;\nselect 2;", "1\n2"},
		{"python", "python3 -i -q", `>>> $`, "a = 1\nb = 2\na+b", "3"},
		{"node", "node --interactive", `> $`, "let a = 1\nlet b = 2\na+b", "undefined\nundefined\n3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, interactive.Spec{Command: c.command, Prompt: c.prompt, Description: c.name})
			want(t, e, c.input, c.output, true)
		})
	}
}

// TestScreenWhileRunningOn: Screen reads a running command's state while
// calls that continue it change it (go test -race).
func TestScreenWhileRunningOn(t *testing.T) {
	e := newEnv(t, pythonSpec)
	resp, err := e.ExecuteLimited(context.Background(), "exec(\"import time\\nwhile True:\\n print('x', flush=True); time.sleep(0.01)\")", envs.Limits{Until: time.Now().Add(100 * time.Millisecond)})
	if err != nil || !resp.Running {
		t.Fatalf("got %+v, %v; want it running", resp, err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if _, err := e.Screen(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for range 20 {
		if _, err := e.ExecuteLimited(context.Background(), "", envs.Limits{Until: time.Now().Add(20 * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	run(t, e, envs.Interrupt, 30*time.Second)
}

// TestScreenAfterKilledBetweenCommands: a program killed while no command
// ran shows as stopped, with how it ended, not as never started; and a
// run started anew and killed shows how that run ended, not the one
// before.
func TestScreenAfterKilledBetweenCommands(t *testing.T) {
	e := newEnv(t, pythonSpec)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		resp := run(t, e, "import os; os.getpid()", 30*time.Second)
		pid, err := strconv.Atoi(strings.TrimSpace(resp.Output[strings.LastIndexByte(resp.Output, '\n')+1:]))
		if err != nil {
			t.Fatalf("got %q, want the pid", resp.Output)
		}
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("Status: stopped (was killed by signal %d (%v)); it starts again with the next command", int(sig), sig)
		var got string
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			s, err := e.Screen()
			if err != nil {
				t.Fatal(err)
			}
			if got = s.Content; !strings.Contains(got, "Status: running") {
				break
			}
		}
		if !strings.Contains(got, want) {
			t.Fatalf("got screen %q, want %q", got, want)
		}
	}
}

// TestEachCommandSeesTheTerminalSize: a command that changes the
// terminal's size (stty) does not change it for the commands after it,
// which see the documented size, and the program's output stays clean.
func TestEachCommandSeesTheTerminalSize(t *testing.T) {
	need(t, "stty")
	for _, spec := range []interactive.Spec{pythonSpec, sqliteSpec} {
		t.Run(strings.Fields(spec.Command)[0], func(t *testing.T) {
			e := newEnv(t, spec)
			shrink, size, want := `import os; os.system("stty cols 20 rows 10")`, "os.get_terminal_size()", "os.terminal_size(columns=200, lines=50)"
			if spec.Command == sqliteSpec.Command {
				shrink, size, want = ".shell stty cols 20 rows 10", ".shell stty size", "50 200"
			}
			run(t, e, shrink, 30*time.Second)
			for range 2 {
				if resp := run(t, e, size, 30*time.Second); resp.Output != want {
					t.Errorf("got %q, want %q", resp.Output, want)
				}
			}
		})
	}
}

// TestTerminalSizeChosenAtStartStays: a size the program chose as it
// started (an rc file's stty) or an init command set is the size each
// command starts with, and one a command changed goes back to it.
func TestTerminalSizeChosenAtStartStays(t *testing.T) {
	need(t, "bash", "stty", "tput")
	bash := interactive.Spec{Command: "bash --norc --noprofile -i", Prompt: `bash\$ `, Env: []string{"PS1=bash$ "}, Description: "bash"}
	byInit := bash
	byInit.Init = []string{"stty cols 80 rows 24", "true"}
	atStart := bash
	atStart.Command = `sh -c "stty cols 120 rows 30; exec bash --norc --noprofile -i"`
	for _, tt := range []struct {
		name string
		spec interactive.Spec
		want string
	}{
		{"init", byInit, "24 80\n80"},
		{"start-up", atStart, "30 120\n120"},
		{"default", bash, "50 200\n200"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.spec)
			for _, command := range []string{"stty size; tput cols", "stty cols 20 rows 10", "stty size; tput cols"} {
				resp := run(t, e, command, 30*time.Second)
				if command != "stty cols 20 rows 10" && resp.Output != tt.want {
					t.Errorf("%s: got %q, want %q", command, resp.Output, tt.want)
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/envtest"
	"github.com/unfold-dev/unfold/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// runMainEnv makes the test binary run main instead of the tests, so
// TestMainOutput can run the real program.
const runMainEnv = "UNFOLD_TIMER_EXAMPLE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// step is a command, or (when command is empty) a tick of the clock.
type step struct {
	command string
	tick    time.Duration
}

func newTestTimer(t *testing.T) (*envs.Declarative, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)}
	env, err := newTimer(session.New(), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	return env, clk
}

func TestScreen(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		// before_start and after_start are the help system's two example timer screens.
		{"before_start", nil},
		{"after_start", []step{{command: "start"}, {tick: 5230 * time.Millisecond}}},
		{"after_stop", []step{{command: "start"}, {tick: 5230 * time.Millisecond}, {command: "stop"}, {tick: time.Hour}}},
		{"after_resume", []step{{command: "start"}, {tick: time.Second}, {command: "stop"}, {tick: time.Hour}, {command: "start"}, {tick: 1500 * time.Millisecond}}},
		{"after_reset", []step{{command: "start"}, {tick: time.Second}, {command: "reset"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, clk := newTestTimer(t)
			for _, s := range tt.steps {
				if s.command == "" {
					clk.Advance(s.tick)
					continue
				}
				if r, err := env.Execute(context.Background(), s.command); err != nil || !r.Success {
					t.Fatalf("Execute(%q) = %+v, %v; want success", s.command, r, err)
				}
			}
			s, err := env.Screen()
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name+".golden", []byte(s.Content))
		})
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  envs.Response // of the last command
	}{
		{"start", []step{{command: "start"}}, envs.Response{Output: "Timer started", Success: true}},
		{"start twice", []step{{command: "start"}, {command: "start"}}, envs.Response{Output: "Error: Timer already running"}},
		{"stop", []step{{command: "start"}, {tick: 2 * time.Second}, {command: "stop"}}, envs.Response{Output: "Elapsed: 2.00s", Success: true}},
		{"stop when stopped", []step{{command: "stop"}}, envs.Response{Output: "Error: Timer not running"}},
		{"resume", []step{{command: "start"}, {tick: 1250 * time.Millisecond}, {command: "stop"}, {command: "start"}}, envs.Response{Output: "Timer resumed at 1.25s", Success: true}},
		{"stop after resume", []step{{command: "start"}, {tick: time.Second}, {command: "stop"}, {tick: time.Minute}, {command: "start"}, {tick: time.Second}, {command: "stop"}}, envs.Response{Output: "Elapsed: 2.00s", Success: true}},
		{"reset", []step{{command: "start"}, {command: "reset"}}, envs.Response{Output: "Timer reset", Success: true}},
		{"arguments", []step{{command: "start now"}}, envs.Response{Output: `Error: this command takes no arguments, got "now"`}},
		{"unknown", []step{{command: "pause"}}, envs.Response{Output: "Unknown command: pause\nAvailable: reset, start, stop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, clk := newTestTimer(t)
			var got envs.Response
			for _, s := range tt.steps {
				if s.command == "" {
					clk.Advance(s.tick)
					continue
				}
				var err error
				if got, err = env.Execute(context.Background(), s.command); err != nil {
					t.Fatal(err)
				}
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "main.golden", out.Bytes())
}

// TestMainOutput runs main in a child process and checks what it prints.
func TestMainOutput(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("main: %v\n%s", err, stderr.Bytes())
	}
	if !*update {
		checkGolden(t, "main.golden", out)
	}
}

func TestConformance(t *testing.T) {
	envtest.Run(t, func(t *testing.T) envs.Env {
		env, _ := newTestTimer(t)
		return env
	}, "reset")
}

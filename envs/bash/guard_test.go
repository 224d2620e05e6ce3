//go:build linux

package bash_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
)

// kept checks that the shell still has x=keep, set before: the same shell
// answers, and no note says it was replaced.
func kept(t *testing.T, s *bash.Shell) {
	t.Helper()
	want(t, s, "echo NEXT $x", "NEXT keep", true)
}

// TestTerminalModesLeft: a command that leaves the terminal polling for a
// key (no canonical input, VMIN 0, VTIME 0), in which the shell's read of
// its next line would get an end of file and end the shell, alone or
// interrupted, leaves the shell and its state, and no notice of bash's.
func TestTerminalModesLeft(t *testing.T) {
	t.Run("left by a command", func(t *testing.T) {
		s := newShell(t)
		run(t, s, "x=keep")
		want(t, s, "stty -icanon min 0 time 0", "", true)
		kept(t, s)
		want(t, s, "stty -icanon -echo min 0 time 0; echo polled", "polled", true)
		kept(t, s)
	})
	t.Run("interrupted while polling", func(t *testing.T) {
		s := newShell(t)
		run(t, s, "x=keep")
		resp := runWithin(t, s, 30*time.Second, "stty -icanon -echo min 0 time 0; while ! read -n1 k; do sleep 0.05; done; stty sane")
		if !resp.Running {
			t.Fatalf("got %+v, want it running on", resp)
		}
		resp = run(t, s, envs.Interrupt)
		if resp.Running || !strings.Contains(resp.Output, "[Interrupted (C-c).") || !strings.Contains(resp.Output, "are kept.]") {
			t.Errorf("C-c: got %+v, want it interrupted and the state kept", resp)
		}
		kept(t, s)
	})
	// Without IGNOREEOF the shell may read the end of file before its
	// modes are set back, or not: either way the responses must say what
	// happened.
	t.Run("the shell ends anyway", func(t *testing.T) {
		s := newShell(t)
		run(t, s, "x=keep")
		resp := run(t, s, "unset IGNOREEOF; stty -icanon min 0 time 0")
		next := run(t, s, "echo NEXT $x")
		switch {
		case strings.Contains(resp.Output, "[The shell ended during this command") && strings.Contains(resp.Output, "aliases and background jobs are lost"):
			if !strings.HasSuffix(next.Output, "\nNEXT") || !strings.Contains(next.Output, "started a new one") {
				t.Errorf("after the shell ended: got %q, want a new shell", next.Output)
			}
		case resp.Output == "" && resp.Success:
			if next.Output != "NEXT keep" {
				t.Errorf("the response said nothing of the shell ending, but the next command got %q", next.Output)
			}
		default:
			t.Errorf("got %+v, want either nothing or a note that the shell ended", resp)
		}
	})
}

// TestInterruptWithoutKey: C-c to the shell's own read, with the
// terminal's signals off or another interrupt character, interrupts it
// with SIGINT and keeps the shell; the ^C is not left in the output.
func TestInterruptWithoutKey(t *testing.T) {
	for _, stty := range []string{"stty -isig", "stty intr ^X", "stty raw"} {
		t.Run(stty, func(t *testing.T) {
			s := newShell(t)
			run(t, s, "x=keep")
			if resp := runWithin(t, s, 30*time.Second, stty+"; read y; echo got=$y"); !resp.Waiting {
				t.Fatalf("got %+v, want it waiting for input", resp)
			}
			resp := run(t, s, envs.Interrupt)
			if resp.Running || !strings.Contains(resp.Output, "[Interrupted (C-c). Interrupted it with Ctrl-C.") || strings.Contains(resp.Output, "^C") || strings.Contains(resp.Output, "got=") {
				t.Errorf("C-c: got %+v, want it interrupted and the state kept", resp)
			}
			kept(t, s)
		})
	}
}

// TestGuardsHold: exit and set -e keep the shell in posix mode (set -o
// posix, POSIXLY_CORRECT), after set +E, and with a user's ERR trap set in
// posix mode; exit in a subshell still exits it with the status bash
// gives. Where they cannot hold (set +E and a failing function in the
// same command), the responses say the shell ended and what was lost.
func TestGuardsHold(t *testing.T) {
	const exitNote = "[exit: the shell stays open"
	const setENote = "[set -e: stopped at a failing command (status 1): false."
	for _, c := range []struct {
		name   string
		steps  []string
		output string // in the last step's output
	}{
		{"POSIXLY_CORRECT", []string{"export POSIXLY_CORRECT=1", "exit 2"}, exitNote},
		{"POSIXLY_CORRECT, same command", []string{"POSIXLY_CORRECT=1; exit 2"}, exitNote},
		{"set -o posix", []string{"set -o posix", "exit 4"}, exitNote},
		{"set -o posix, same command", []string{"set -o posix; echo x; exit 4"}, exitNote},
		{"posix mode, set -e", []string{"set -o posix", "set -e; false"}, setENote},
		{"posix mode, a user's ERR trap", []string{"set -o posix", "trap 'echo user' ERR", "set -e; false"}, setENote},
		{"set +E", []string{"set +E", "set -e; f() { false; echo no; }; f"}, setENote},
		{"set +o errtrace", []string{"set +o errtrace", "set -e; f() { false; echo no; }; f"}, setENote},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newShell(t)
			run(t, s, "x=keep")
			var resp envs.Response
			for _, step := range c.steps {
				resp = run(t, s, step)
			}
			if resp.Success || !strings.Contains(resp.Output, c.output) || strings.Contains(resp.Output, "ended") || strings.Contains(resp.Output, "\nno") {
				t.Errorf("got %+v, want it stopped with %q", resp, c.output)
			}
			kept(t, s)
		})
	}
	t.Run("set +E said", func(t *testing.T) {
		s := newShell(t)
		want(t, s, "set +E", "[set +E: errtrace is on again: without it a failure under set -e inside a function would end this persistent shell and lose its state (working directory, variables, background jobs).]", true)
		want(t, s, `[[ $- == *E* ]] && echo on`, "on", true)
	})
	t.Run("exit in subshells", func(t *testing.T) {
		s := newShell(t)
		for _, c := range []struct{ command, output string }{
			{"( false; exit ); echo $?", "1"},
			{"(exit 42); echo $?", "42"},
			{"echo $(exit 3) $?", "3"},
			{"set -o posix; (exit 5); echo $?; set +o posix", "5"},
		} {
			want(t, s, c.command, c.output, true)
		}
	})
	t.Run("set +E and a failing function in one command", func(t *testing.T) {
		s := newShell(t)
		run(t, s, "x=keep")
		resp := run(t, s, "set +E; set -e; f() { false; echo no; }; f")
		if resp.Success || !strings.Contains(resp.Output, "[The shell ended during this command (exited with status 1).") || !strings.Contains(resp.Output, "aliases and background jobs are lost") {
			t.Errorf("got %+v, want it to say the shell ended and the state was lost", resp)
		}
		resp = run(t, s, "echo NEXT $x")
		if !strings.Contains(resp.Output, "started a new one") || !strings.HasSuffix(resp.Output, "\nNEXT") {
			t.Errorf("next: got %q, want a new shell, said", resp.Output)
		}
	})
}

// TestTraceShowsNoInternals: under set -x, with a background job (whose
// list the prompt prints) and with PS1 changed (which the prompt puts
// back), a command's output is its own trace and output: nothing of the
// environment's prompt code, which holds the marker's secret.
func TestTraceShowsNoInternals(t *testing.T) {
	for _, c := range []struct{ name, setup string }{
		{"a job", "sleep 1000 &"},
		{"PS1 changed", "PS1='$ '"},
		{"a job, PS1 changed", "sleep 1000 & PS1='$ '"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newShell(t)
			run(t, s, c.setup)
			run(t, s, "set -x")
			for range 2 {
				want(t, s, "echo hello", "+ echo hello\nhello", true)
			}
			resp := run(t, s, "exit 3")
			if strings.Contains(resp.Output, "__unfold_abort") || strings.Contains(resp.Output, "PS1") {
				t.Errorf("exit under set -x: got %q, want none of the prompt's code", resp.Output)
			}
			want(t, s, "echo after", "+ echo after\nafter", true)
		})
	}
}

// TestFunctionNamedBuiltin: a function named builtin or enable, or
// builtin disabled, defined in a command before or in the same command as
// a job or a failure under set -e, is removed (the response says so) or
// enabled again: the job list, exit and set -e work, and nothing reaches
// the function.
func TestFunctionNamedBuiltin(t *testing.T) {
	const note = "[builtin: the shell function named builtin was removed"
	for _, c := range []struct {
		name  string
		steps []string
	}{
		{"before", []string{`builtin() { echo "BUILTIN($*)"; }`, "sleep 1000 &", "true", "set -e; false", "exit 3"}},
		{"with a job", []string{`builtin() { echo "BUILTIN($*)"; }; sleep 1000 &`, "true"}},
		{"with set -e", []string{`builtin() { echo "BUILTIN($*)"; }; set -e; false`}},
		{"with exit", []string{`builtin() { echo "BUILTIN($*)"; }; exit 3`}},
		{"from a file", []string{`echo 'builtin() { echo "BUILTIN($*)"; }' >f; . ./f; sleep 1000 &`, "set -e; false"}},
		{"enable too", []string{`enable() { echo "ENABLE($*)"; }; builtin() { echo "BUILTIN($*)"; }`, "enable -n builtin; sleep 1000 &", "set -e; false"}},
		{"disabled", []string{"enable -n builtin", "sleep 1000 &", "set -e; false", "exit 3"}},
		{"disabled with a job", []string{"enable -n builtin; sleep 1000 &", "set -e; false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newShell(t)
			run(t, s, "x=keep")
			noted := false
			for _, step := range c.steps {
				resp := run(t, s, step)
				noted = noted || strings.Contains(resp.Output, note)
				if strings.Contains(resp.Output, "BUILTIN(") || strings.Contains(resp.Output, "ENABLE(") || strings.Contains(resp.Output, "not found") || strings.Contains(resp.Output, "ended") {
					t.Errorf("%q: got %q, want nothing of the function and the shell kept", step, resp.Output)
				}
			}
			if strings.Contains(c.steps[0], "builtin()") && !noted {
				t.Errorf("no response said the function was removed")
			}
			if sc := screen(t, s); strings.Contains(c.steps[len(c.steps)-1]+c.steps[0], "sleep") && !strings.Contains(sc, "Background jobs: [1] ") {
				t.Errorf("screen: got %q, want the job", sc)
			}
			kept(t, s)
			want(t, s, "type -t builtin", "builtin", true)
		})
	}
}

// TestModesLeftRunningOn: a command that leaves the terminal with VMIN 0
// and ends after control came back has the shell read an end of file at
// its prompt over and over; the modes are set back as soon as that shows,
// so the next command gets its own output, not megabytes of the shell's
// notices.
func TestModesLeftRunningOn(t *testing.T) {
	s := newShell(t)
	run(t, s, "x=keep")
	resp, err := s.ExecuteLimited(context.Background(), "stty -icanon min 0 time 0; sleep 0.5", envs.Limits{Until: time.Now().Add(100 * time.Millisecond), Quiet: -1})
	if err != nil || !resp.Running {
		t.Fatalf("got %+v, %v; want it running on", resp, err)
	}
	// Long enough for the command to end and the shell to spin a while
	// without the fix.
	time.Sleep(2 * time.Second)
	want(t, s, "", "", true)
	kept(t, s)
}

// TestBuiltinExitStops: exit is disabled as a builtin so that posix mode
// finds the function; builtin exit and command exit then fail, and the
// command must stop there as exit would have made it, not go on.
func TestBuiltinExitStops(t *testing.T) {
	s := newShell(t)
	run(t, s, "x=keep")
	for _, c := range []string{
		"cd /nonexistent-dir 2>/dev/null || builtin exit 1; echo WOULD-RUN",
		"cd /nonexistent-dir 2>/dev/null || command exit 4; echo WOULD-RUN",
	} {
		resp := run(t, s, c)
		if strings.Contains(resp.Output, "WOULD-RUN") || resp.Success {
			t.Errorf("%s: got %+v, want it stopped at the exit", c, resp)
		}
		kept(t, s)
	}
	// The status is the one named, in a number or a variable.
	if resp := run(t, s, "rc=5; cd /nonexistent-dir 2>/dev/null || builtin exit $rc; echo WOULD-RUN"); strings.Contains(resp.Output, "WOULD-RUN") || !strings.Contains(resp.Output, "with status 5.") {
		t.Errorf("builtin exit $rc: got %q, want it stopped with status 5", resp.Output)
	}
	kept(t, s)
	// bash says why builtin exit failed; the subshell exits all the same,
	// with the status bash's exit gives its argument (2 for one that is
	// not a number). The variables are the user's, not those of the shell's
	// own code that reads them.
	for c, st := range map[string]string{
		"builtin exit 3":             "st=3",
		"v=7; builtin exit $v":       "st=7",
		`x=300; command exit "${x}"`: "st=44",
		"n=-1; builtin exit $n":      "st=255",
		"y=abc; builtin exit $y":     "st=2",
		"builtin exit $((1+2))":      "st=1",
	} {
		if resp := run(t, s, "( "+c+"; echo still-here ); echo \"st=$?\""); !strings.HasSuffix(resp.Output, "\n"+st) || strings.Contains(resp.Output, "still-here") {
			t.Errorf("%s in a subshell: got %q, want it to exit with %s", c, resp.Output, st)
		}
	}
}

// TestShellOptionsKept: the moment of posix mode the environment's own
// code takes leaves the user's shell options as they were (leaving posix
// mode turns inherit_errexit on, among others).
func TestShellOptionsKept(t *testing.T) {
	s := newShell(t)
	const opts = "inherit_errexit shift_verbose sourcepath expand_aliases"
	before := run(t, s, "shopt -p "+opts).Output
	run(t, s, "false")
	run(t, s, "sleep 5 & f() { false; }; f")
	if after := run(t, s, "kill %1; wait; shopt -p "+opts).Output; !strings.HasSuffix(after, before) {
		t.Errorf("shell options: got %q after failures and a job, want %q", after, before)
	}
	want(t, s, `( set -e; v=$(false; echo ok); echo "v=$v" )`, "v=ok", true)
}

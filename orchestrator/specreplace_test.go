package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// slowRepl is an interactive program with a command that runs on and one
// that asks a question.
const slowRepl = `import time
while True:
    try:
        line = input("sr> ")
    except EOFError:
        break
    if line == "slow":
        for i in range(100):
            print("tick", i, flush=True)
            time.sleep(0.2)
    elif line == "ask":
        print("hi " + input("Your name? "))
    else:
        print("echo: " + line)
`

// TestSpecChangedWhileRunning: a spec file changed or removed while its
// environment's command runs on: the next command is told that the
// command and the state were lost, and "", C-c or an answer meant for the
// old program is not sent to the new one.
func TestSpecChangedWhileRunning(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	spec := func(desc string) string {
		return `{"kind":"interactive","command":"python3 env/sr.py","prompt":"sr> $","description":"` + desc + `","timeout":1}`
	}
	for _, tc := range []struct {
		name, start, next, want string
		remove                  bool
	}{
		{"wait", "slow", "", `[sr was stopped because env/sr.json changed: the command that was running, "slow", was lost with the program's state.]`, false},
		{"interrupt", "slow", "C-c", `[sr was stopped because env/sr.json changed: the command that was running, "slow", was lost with the program's state.]`, false},
		{"answer", "ask", "bob", `[sr was stopped because env/sr.json changed: the command that was running, "ask", was lost with the program's state.]` +
			"\n[The text was not sent: the command it was meant for was lost. Send it again to run it as a command in the new program.]", false},
		{"idle", "x", "y", "[sr was stopped because env/sr.json changed; its state from before was lost.]\necho: y", false},
		{"removed", "slow", "", "[sr was stopped because env/sr.json was removed: the command that was running, \"slow\", was lost with the program's state.]\nUnknown environment: sr\nAvailable: none; no environment is loaded (a spec file that failed to load is named on the orchestrator's screen)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, map[string]string{"sr.json": spec("v1")})
			if err := os.WriteFile(filepath.Join(dir, "env", "sr.py"), []byte(slowRepl), 0o644); err != nil {
				t.Fatal(err)
			}
			o := mustNew(t, WithInteractive(newInteractive))
			defer o.Close()
			if err := o.LoadSpecs(dir); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// On a busy machine python may take longer than the spec's
			// one second to show its prompt: wait for it as the response
			// says to.
			first := o.Execute(ctx, "sr", tc.start).Response
			for i := 0; i < 30 && first.Running && strings.HasPrefix(first.Output, "[Still starting"); i++ {
				first = o.Execute(ctx, "sr", "").Response
			}
			if first.Running != (tc.start != "x") {
				t.Fatalf("%s: got %+v", tc.start, first)
			}
			if tc.remove {
				if err := os.Remove(filepath.Join(dir, "env", "sr.json")); err != nil {
					t.Fatal(err)
				}
			} else {
				writeSpec(t, dir, "sr.json", spec("v2"))
			}
			got := o.Execute(ctx, "sr", tc.next).Response
			if tc.name == "idle" {
				// The new program runs y once it has started.
				for i := 0; i < 30 && got.Running && strings.HasSuffix(got.Output, "C-c to stop it.]"); i++ {
					prev := got.Output[:strings.LastIndex(got.Output, "[Still starting")]
					got = o.Execute(ctx, "sr", "").Response
					got.Output = prev + got.Output
				}
			}
			if got.Output != tc.want || got.Running {
				t.Errorf("got %+v, want output %q", got, tc.want)
			}
			if tc.remove {
				return
			}
			// The note is given once, and the new program runs commands
			// (once it has started: on a busy machine python may take
			// longer than the spec's one second to show its prompt).
			got = o.Execute(ctx, "sr", "z").Response
			for i := 0; i < 30 && got.Running && strings.HasPrefix(got.Output, "[Still starting"); i++ {
				got = o.Execute(ctx, "sr", "").Response
			}
			if got.Output != "echo: z" || !got.Success {
				t.Errorf("then: got %+v, want echo: z", got)
			}
		})
	}
}

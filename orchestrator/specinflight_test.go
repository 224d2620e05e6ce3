package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// blockRepl is an interactive program whose command "block" makes the
// file started and then sleeps without a word.
const blockRepl = `import time
while True:
    try:
        line = input("br> ")
    except EOFError:
        break
    if line == "block":
        open("started", "w").close()
        time.sleep(1000)
    else:
        print("echo: " + line)
`

// TestSpecChangedUnderCommand: a spec file changed or removed while its
// environment's first command runs, before control came back: that
// command is told the spec change stopped it, which file, and whether
// the environment starts again (not that the program was killed by a
// signal, as if the command crashed it); the next command is told the
// program's state was lost.
func TestSpecChangedUnderCommand(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	spec := func(desc string) string {
		return `{"kind":"interactive","command":"python3 env/br.py","prompt":"br> $","description":"` + desc + `","timeout":600,"quiet":600}`
	}
	for _, tc := range []struct {
		name      string
		change    string // the spec's new content; "" removes it
		want      string // the answer to the command cut off
		wantNext  string // the answer to "y" after it
		nextAgain bool   // the next command may find the program starting
	}{
		{"changed", spec("v2"),
			"[br was stopped because env/br.json changed while this command ran: the command and the program's state were lost. br starts again, as the file now says, with the next command.]",
			"[br was stopped because env/br.json changed; its state from before was lost.]\necho: y", true},
		{"no_longer_loads", `{"kind":"interactive"}`,
			"[br was stopped because env/br.json changed while this command ran: the command and the program's state were lost. br no longer exists: the file does not load now (the orchestrator's screen says why).]",
			"[br was stopped because env/br.json changed; its state from before was lost.]\nUnknown environment: br\nAvailable: other", false},
		{"removed", "",
			"[br was stopped because env/br.json was removed while this command ran: the command and the program's state were lost. br no longer exists.]",
			"[br was stopped because env/br.json was removed; its state from before was lost.]\nUnknown environment: br\nAvailable: other", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, map[string]string{"br.json": spec("v1")})
			if err := os.WriteFile(filepath.Join(dir, "env", "br.py"), []byte(blockRepl), 0o644); err != nil {
				t.Fatal(err)
			}
			o := mustNew(t, WithInteractive(newInteractive))
			defer o.Close()
			if err := o.LoadSpecs(dir); err != nil {
				t.Fatal(err)
			}
			if err := o.Register("other", &testEnv{}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			done := make(chan envs.Response, 1)
			go func() { done <- o.Execute(ctx, "br", "block").Response }()
			started := filepath.Join(dir, "started")
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the command did not start within a minute")
				}
			}
			if tc.change == "" {
				if err := os.Remove(filepath.Join(dir, "env", "br.json")); err != nil {
					t.Fatal(err)
				}
			} else {
				writeSpec(t, dir, "br.json", tc.change)
			}
			o.Execute(ctx, "other", "x") // reloads the spec files
			got := <-done
			if got.Output != tc.want || got.Success || got.Running {
				t.Errorf("the command cut off: got %+v, want output %q", got, tc.want)
			}
			next := o.Execute(ctx, "br", "y").Response
			if tc.nextAgain {
				// The new program runs y once it has started.
				for i := 0; i < 30 && next.Running && strings.HasSuffix(next.Output, "C-c to stop it.]"); i++ {
					prev := next.Output[:strings.LastIndex(next.Output, "[Still starting")]
					next = o.Execute(ctx, "br", "").Response
					next.Output = prev + next.Output
				}
			}
			if next.Output != tc.wantNext {
				t.Errorf("next: got %+v, want output %q", next, tc.wantNext)
			}
		})
	}
}

// TestSpecChangedAsCommandEnds: a command that ends well after a reload
// dropped its environment, before the program was stopped under it,
// keeps its output, and the note says the program's state was lost, not
// the command. The environment reloads the spec files itself, while the
// command runs, so no timing decides the order.
func TestSpecChangedAsCommandEnds(t *testing.T) {
	var o *Orchestrator
	dir := writeProject(t, map[string]string{"e.json": shSpec("v1")})
	var reloaded int
	o = mustNew(t, WithProcesses(func(ProcessSpec) (envs.Env, error) {
		return &testEnv{execute: func(ctx context.Context, cmd string) (envs.Response, error) {
			if cmd == "change" {
				writeSpec(t, dir, "e.json", shSpec("v2"))
				o.ReloadSpecs()
				reloaded++
			}
			return envs.Response{Output: "done: " + cmd, Success: true}, nil
		}}, nil
	}))
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := o.Execute(ctx, "e", "first").Response; got.Output != "done: first" {
		t.Fatalf("first: got %+v", got)
	}
	got := o.Execute(ctx, "e", "change").Response
	want := "done: change\n[e was stopped because env/e.json changed as this command ended: the program's state was lost. e starts again, as the file now says, with the next command.]"
	if reloaded != 1 || got.Output != want || !got.Success {
		t.Errorf("got %+v after %d reloads, want output %q", got, reloaded, want)
	}
}

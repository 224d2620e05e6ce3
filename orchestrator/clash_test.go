package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// TestSpecNameClashIgnoringCase writes env/BASH.json beside an
// environment bash, as a command can: that file alone is refused, naming
// both, and the prompt of the others is still built. A spec file refused
// for a name another spec file takes loads once that file is removed.
func TestSpecNameClashIgnoringCase(t *testing.T) {
	dir := writeProject(t, nil)
	o := mustNew(t, trivialProcesses())
	defer o.Close()
	if err := o.Register("bash", &testEnv{}); err != nil {
		t.Fatal(err)
	}
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "BASH.json", shSpec("upper"))
	o.Execute(context.Background(), "bash", "true") // picks the file up
	want := "env/BASH.json: orchestrator: register BASH: the environment bash is registered, whose name differs only in case: their prompt sections would have the same key \"bash\"; rename one"
	if got := o.LoadErrors(); len(got) != 1 || got[0].Error() != want {
		t.Errorf("got load errors %v, want [%s]", got, want)
	}
	if got := o.Names(); !slices.Equal(got, []string{"bash"}) {
		t.Errorf("got environments %v, want [bash]", got)
	}
	secs, err := o.Sections()
	if err != nil {
		t.Fatalf("sections: %v", err)
	}
	if _, err := prompt.New("test", "root", secs...); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if screen := o.Screens()[ScreenName].Content; !strings.Contains(screen, want) {
		t.Errorf("got orchestrator screen %q, want it to hold %q", screen, want)
	}

	// Two spec files: Db.json sorts first and loads; db.json waits for it.
	writeSpec(t, dir, "Db.json", shSpec("first"))
	writeSpec(t, dir, "db.json", shSpec("second"))
	o.ReloadSpecs()
	if got := o.Names(); !slices.Equal(got, []string{"Db", "bash"}) {
		t.Errorf("got environments %v, want [Db bash]", got)
	}
	if err := os.Remove(filepath.Join(dir, "env", "Db.json")); err != nil {
		t.Fatal(err)
	}
	o.ReloadSpecs()
	if got := o.Names(); !slices.Equal(got, []string{"bash", "db"}) {
		t.Errorf("after removing env/Db.json: got environments %v, want [bash db]", got)
	}
	if got := o.LoadErrors(); len(got) != 1 || got[0].Error() != want {
		t.Errorf("after removing env/Db.json: got load errors %v, want [%s]", got, want)
	}
}

// TestRegisterClash registers environments and tools whose names clash:
// each is refused when registered, naming what it clashes with, so that
// no front end fails later to offer them side by side.
func TestRegisterClash(t *testing.T) {
	tool := func(name string) *tools.Tool {
		return tools.MustNew(name, "A tool.", func(context.Context, tools.Context, struct{}) (string, error) { return "", nil })
	}
	tests := []struct {
		name    string
		opts    []RegisterOption
		wantErr string
	}{
		{"Shell", nil, `orchestrator: register Shell: the environment shell is registered, whose name differs only in case: their prompt sections would have the same key "shell"; rename one`},
		{"grep", nil, "orchestrator: register grep: its command tool would be named grep, as is a tool of shell; rename it"},
		{"other", []RegisterOption{Tools(tool("shell"))}, "orchestrator: register other: its tool shell has the name of the command tool of shell; rename one"},
		{"other", []RegisterOption{Tools(tool("grep"))}, "orchestrator: register other: its tool grep has the name of a tool of shell; rename one"},
		{"other", []RegisterOption{Tools(tool("other"))}, "orchestrator: register other: its tool other has the name of its own command tool; rename one"},
		{"other", []RegisterOption{Tools(tool("x"), tool("x"))}, "orchestrator: register other: its tool x has the name of another of its tools; rename one"},
		{"other", []RegisterOption{Tools(tool(tools.HelpName))}, "orchestrator: register other: its tool help has the name of the front ends' own tool; rename one"},
	}
	for _, tt := range tests {
		t.Run(tt.wantErr[len("orchestrator: register "):], func(t *testing.T) {
			o := mustNew(t)
			defer o.Close()
			if err := o.Register("shell", &testEnv{}, Tools(tool("grep"))); err != nil {
				t.Fatal(err)
			}
			err := o.Register(tt.name, &testEnv{}, tt.opts...)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got %v, want %s", err, tt.wantErr)
			}
			if got := o.Names(); !slices.Equal(got, []string{"shell"}) {
				t.Errorf("got environments %v, want [shell]", got)
			}
			secs, err := o.Sections()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := prompt.New("test", "root", secs...); err != nil {
				t.Errorf("prompt: %v", err)
			}
		})
	}
}

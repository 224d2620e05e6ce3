package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// newTimer is the timer of the help system's example as a declarative environment, on a clock
// that only moves when told to.
func newTimer(t *testing.T, sess *session.Session, now func() time.Time) *envs.Declarative {
	t.Helper()
	var mu sync.Mutex // guards running, since, elapsed
	var running bool
	var since time.Time
	var elapsed time.Duration
	secs := func(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
	d, err := envs.NewDeclarative("timer", sess, envs.DeclarativeSpec{
		Description: "Timer for tracking elapsed time",
		Commands: []envs.Command{
			{Signature: "start", Description: "Start the timer from zero or resume after stop.", Example: "start", Handler: func(context.Context, string) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				if running {
					return "", errors.New("Timer already running")
				}
				running, since = true, now()
				return "Timer started", nil
			}},
			{Signature: "stop", Description: "Stop the timer and record elapsed time.", Example: "stop", Handler: func(context.Context, string) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				if !running {
					return "", errors.New("Timer not running")
				}
				running = false
				elapsed += now().Sub(since)
				return "Elapsed: " + secs(elapsed), nil
			}},
		},
		State: func() string {
			mu.Lock()
			defer mu.Unlock()
			if running {
				return "Timer: Running (" + secs(elapsed+now().Sub(since)) + ")"
			}
			return "Timer: Stopped (" + secs(elapsed) + ")"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkGolden compares got with testdata/sections/<name>.golden.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "sections", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

type workbench struct {
	sess *session.Session
	o    *Orchestrator
	p    *prompt.Prompt
	fs   afero.Fs
}

// newWorkbench registers an echo environment (in full) and the timer (on
// demand) and builds a prompt of their sections, each carrying its
// environment's command tool.
func newWorkbench(t *testing.T) *workbench {
	t.Helper()
	sess := session.New()
	o := mustNew(t, WithSession(sess))
	t.Cleanup(func() { o.Close() })
	clk := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	if err := o.Register("echo", &testEnv{}, Description("Echo (ready)")); err != nil {
		t.Fatal(err)
	}
	if err := o.Register("timer", newTimer(t, sess, func() time.Time { return clk }), OnDemand()); err != nil {
		t.Fatal(err)
	}
	secs, err := o.Sections()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := prompt.New("test", "workbench", secs...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tmpl.Bind()
	if err != nil {
		t.Fatal(err)
	}
	return &workbench{sess: sess, o: o, p: p, fs: afero.NewMemMapFs()}
}

func (w *workbench) render(t *testing.T) *prompt.Rendered {
	t.Helper()
	r, err := w.p.Render(w.sess, w.fs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func toolNames(r *prompt.Rendered) []string {
	var names []string
	for _, tool := range r.Tools() {
		names = append(names, tool.Name())
	}
	return names
}

func modes(r *prompt.Rendered) string {
	var parts []string
	for _, s := range r.Report() {
		parts = append(parts, s.Path+"="+s.Mode.String()+"("+s.Why.String()+")")
	}
	return strings.Join(parts, " ")
}

// TestOnDemandOpenedByModel follows the open_sections path end to end: the
// on-demand timer starts as its summary without its tool; the model opens
// it; the expansion is applied; the next render shows the timer in full and
// offers its tool, which runs a command.
func TestOnDemandOpenedByModel(t *testing.T) {
	w := newWorkbench(t)
	r := w.render(t)
	checkGolden(t, "on_demand_closed", r.Text())
	if got, want := modes(r), "echo=FULL(declared) timer=SUMMARY(selector)"; got != want {
		t.Errorf("got modes %s, want %s", got, want)
	}
	if got, want := toolNames(r), []string{"echo", "open_sections"}; !slices.Equal(got, want) {
		t.Errorf("got tools %v, want %v", got, want)
	}

	_, err := r.Tool("open_sections").Call(context.Background(), tools.Context{Session: w.sess, FS: w.fs}, []byte(`{"section_keys":["timer"],"reason":"time the build"}`))
	if !errors.Is(err, prompt.ErrVisibilityExpansion) {
		t.Fatalf("got %v, want the visibility expansion error", err)
	}
	if err := prompt.ApplyExpansion(w.sess, err); err != nil {
		t.Fatal(err)
	}

	r = w.render(t)
	checkGolden(t, "on_demand_opened", r.Text())
	if got, want := modes(r), "echo=FULL(declared) timer=FULL(override)"; got != want {
		t.Errorf("got modes %s, want %s", got, want)
	}
	if got, want := toolNames(r), []string{"echo", "timer"}; !slices.Equal(got, want) {
		t.Errorf("got tools %v, want %v", got, want)
	}
	res, err := r.Tool("timer").Call(context.Background(), tools.Context{Session: w.sess}, []byte(`{"command":"start"}`))
	if err != nil || !res.Success || res.Message != "Timer started" {
		t.Errorf("timer tool: got %+v, %v; want success \"Timer started\"", res, err)
	}
	res, _ = r.Tool("timer").Call(context.Background(), tools.Context{Session: w.sess}, []byte(`{"command":"start"}`))
	if res.Success || res.Message != "Error: Timer already running" {
		t.Errorf("timer tool, second start: got %+v, want failure \"Error: Timer already running\"", res)
	}
	if n := GetUsage(w.sess).Count("timer"); n != 2 {
		t.Errorf("got %d timer commands in the session, want 2", n)
	}
	checkGolden(t, "on_demand_used", w.render(t).Text())
}

// TestOnDemandOpenedByUse opens the on-demand section by running a command
// in the environment: the CommandExecuted event flips the selector.
func TestOnDemandOpenedByUse(t *testing.T) {
	w := newWorkbench(t)
	snap := w.sess.Snapshot()
	if res := w.o.Execute(context.Background(), "echo", "hi"); !res.Response.Success {
		t.Fatalf("echo: got %+v", res.Response)
	}
	if got, want := modes(w.render(t)), "echo=FULL(declared) timer=SUMMARY(selector)"; got != want {
		t.Errorf("after another environment's command: got modes %s, want %s", got, want)
	}
	if res := w.o.Execute(context.Background(), "timer", "start"); res.Response.Output != "Timer started" {
		t.Fatalf("timer: got %+v", res.Response)
	}
	r := w.render(t)
	if got, want := modes(r), "echo=FULL(declared) timer=FULL(selector)"; got != want {
		t.Errorf("after the first timer command: got modes %s, want %s", got, want)
	}
	if got, want := toolNames(r), []string{"echo", "timer"}; !slices.Equal(got, want) {
		t.Errorf("got tools %v, want %v", got, want)
	}
	// Restoring the earlier snapshot closes it again.
	if err := w.sess.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got, want := modes(w.render(t)), "echo=FULL(declared) timer=SUMMARY(selector)"; got != want {
		t.Errorf("after restoring the snapshot: got modes %s, want %s", got, want)
	}
}

func TestSectionSummaries(t *testing.T) {
	tests := []struct {
		name string
		env  envs.Env
		opts []RegisterOption
		want string
	}{
		{"summarizer wins", &summarized{testEnv{}, "Bash shell (ready)"}, []RegisterOption{Description("ignored")}, "Bash shell (ready)"},
		{"first line only", &summarized{testEnv{}, "  Line one  \nline two"}, nil, "Line one"},
		{"description", &testEnv{}, []RegisterOption{Description("Counter (ready)")}, "Counter (ready)"},
		{"empty summary falls back", &summarized{testEnv{}, ""}, []RegisterOption{Description("Fallback")}, "Fallback"},
		{"default", &testEnv{}, nil, "env environment"},
		{"braces are text", &summarized{testEnv{}, "Jinja renderer: {{ name }} and {{.Field}}"}, nil, "Jinja renderer: {{ name }} and {{.Field}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t)
			if err := o.Register("env", tt.env, tt.opts...); err != nil {
				t.Fatal(err)
			}
			secs, err := o.Sections()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := prompt.New("test", "summaries", secs...); err != nil {
				t.Fatal(err)
			}
			if got, err := secs[0].SummaryFor(nil); err != nil || got != tt.want {
				t.Errorf("got summary %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

type summarized struct {
	testEnv
	summary string
}

func (s *summarized) Summary() string { return s.summary }

// TestSectionSummaryRender renders an environment's section as its summary
// through a session override, as a budget would: the summary, the suffix,
// and no tools.
func TestSectionSummaryRender(t *testing.T) {
	sess := session.New()
	o := mustNew(t, WithSession(sess))
	_ = o.Register("bash", &summarized{testEnv{}, "Bash shell (ready)"})
	secs, err := o.Sections()
	if err != nil {
		t.Fatal(err)
	}
	p := prompt.MustNew("test", "summary", secs...).MustBind()
	if err := visibility.Register(sess); err != nil {
		t.Fatal(err)
	}
	if err := sess.Dispatch(visibility.SetOverride{Path: "bash", Mode: visibility.Summary}); err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "## 1. bash (bash)\n\nBash shell (ready)\n\n---\n[This section is summarized. To view full content and access additional tools, call `open_sections` with key \"bash\".]"
	if r.Text() != want {
		t.Errorf("got\n%s\nwant\n%s", r.Text(), want)
	}
	if got := toolNames(r); !slices.Equal(got, []string{"open_sections"}) {
		t.Errorf("got tools %v, want only open_sections", got)
	}
}

func TestSectionLiveBody(t *testing.T) {
	tests := []struct {
		name   string
		screen envs.Screen
		err    error
		want   string
	}{
		{"screen", envs.Screen{Content: "state: ok"}, nil, "## 1. env (env)\n\nstate: ok"},
		{"truncated", envs.Screen{Content: "a\nb\nc\nd", MaxLines: 2}, nil, "## 1. env (env)\n\na\n[... 3 more lines cut: this screen shows at most 2 lines]"},
		{"fence cut open", envs.Screen{Content: "Output:\n````\nline\nline\nline", MaxLines: 3}, nil, "## 1. env (env)\n\nOutput:\n````\n[... 3 more lines cut: this screen shows at most 3 lines]\n````"},
		{"headings shifted", envs.Screen{Content: "# Views\nnone"}, nil, "## 1. env (env)\n\n### Views\nnone"},
		{"screen error", envs.Screen{}, errors.New("no tty"), "## 1. env (env)\n\n[Error getting screen from env:\nno tty]"},
		{"empty", envs.Screen{}, nil, "## 1. env (env)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t)
			_ = o.Register("env", &testEnv{screen: func() (envs.Screen, error) { return tt.screen, tt.err }})
			secs, err := o.Sections()
			if err != nil {
				t.Fatal(err)
			}
			r, err := prompt.MustNew("test", "live", secs...).MustBind().Render(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Text() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", r.Text(), tt.want)
			}
		})
	}
}

func TestSectionKeys(t *testing.T) {
	tests := []struct {
		name    string
		envs    []string
		want    []string
		wantErr string
	}{
		{"lower case", []string{"Bash", "py3"}, []string{"bash", "py3"}, ""},
		{"underscore start", []string{"_hidden"}, nil, `orchestrator: sections: environment _hidden has no valid section key: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t)
			for _, n := range tt.envs {
				if err := o.Register(n, &testEnv{}); err != nil {
					t.Fatal(err)
				}
			}
			secs, err := o.Sections()
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("got %v, want an error starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range secs {
				got = append(got, s.Key())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got keys %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLoadErrorSection shows spec files that failed to load as a section.
func TestLoadErrorSection(t *testing.T) {
	dir := writeProject(t, map[string]string{"bad.json": `{"kind":"process"}`})
	o := mustNew(t)
	_ = o.LoadSpecs(dir)
	secs, err := o.Sections()
	if err != nil {
		t.Fatal(err)
	}
	r, err := prompt.MustNew("test", "errors", secs...).MustBind().Render(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "## 1. Orchestrator (orchestrator)\n\nEnvironment spec files that failed to load (fix them: they are read again before the next command):\n- env/bad.json: missing field \"description\"; missing field \"executable\""
	if r.Text() != want {
		t.Errorf("got\n%s\nwant\n%s", r.Text(), want)
	}
}

func TestCommandToolName(t *testing.T) {
	o := mustNew(t)
	long := strings.Repeat("a", 65)
	_ = o.Register(long, &testEnv{})
	if _, err := o.CommandTool(long); err == nil || !errors.Is(err, tools.ErrInvalidName) {
		t.Errorf("got %v, want an invalid tool name error", err)
	}
	if _, err := o.Sections(); err == nil {
		t.Error("got nil error, want the key and tool name errors")
	}
}

// TestCommandTools takes the environments' names, command tools and
// generation together, the same tools CommandTool gives, and fails as it
// does on a name no tool can have.
func TestCommandTools(t *testing.T) {
	o := mustNew(t)
	for _, name := range []string{"zeta", "alpha"} {
		if err := o.Register(name, &testEnv{}); err != nil {
			t.Fatal(err)
		}
	}
	names, byName, gen, err := o.CommandTools()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"alpha", "zeta"}) || len(byName) != 2 || gen != o.Generation() {
		t.Errorf("got %v, %d tools, generation %d, want [alpha zeta], 2 tools, generation %d", names, len(byName), gen, o.Generation())
	}
	for _, name := range names {
		if one, _ := o.CommandTool(name); byName[name] != one || one.Name() != name {
			t.Errorf("%s: got tool %v, want CommandTool's, named %s", name, byName[name], name)
		}
	}
	_ = o.Register(strings.Repeat("a", 65), &testEnv{})
	if _, _, _, err := o.CommandTools(); !errors.Is(err, tools.ErrInvalidName) {
		t.Errorf("with a name too long for a tool: got %v, want an invalid tool name error", err)
	}
}

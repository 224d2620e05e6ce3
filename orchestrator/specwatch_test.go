package orchestrator

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// trivialProcesses makes process spec files environments that start
// nothing.
func trivialProcesses() Option {
	return WithProcesses(func(ProcessSpec) (envs.Env, error) { return &trivialEnv{}, nil })
}

// shSpec is a process spec file described by desc.
func shSpec(desc string) string {
	return `{"kind":"process","executable":"sh","description":"` + desc + `"}`
}

func writeSpec(t testing.TB, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "env", name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSpecChangeSeenAtOnce writes a spec file and sends a command right
// after, again and again, with the env directory watched: every command
// sees the file as just written. A watcher that delivers its events from
// another goroutine misses some of these.
func TestSpecChangeSeenAtOnce(t *testing.T) {
	dir := writeProject(t, nil)
	o := mustNew(t, trivialProcesses())
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	if o.specs.watch == nil {
		t.Fatal("the env directory is not watched")
	}
	ctx := context.Background()
	for i := range 200 {
		desc := fmt.Sprintf("version %d", i)
		writeSpec(t, dir, "w.json", shSpec(desc))
		if res := o.Execute(ctx, "w", "x"); !res.Response.Success {
			t.Fatalf("write %d: got %+v, want the environment", i, res.Response)
		}
		if got, _ := o.Summary("w"); got != desc {
			t.Fatalf("write %d: got summary %q, want %q", i, got, desc)
		}
		if i%2 == 1 {
			if err := os.Remove(filepath.Join(dir, "env", "w.json")); err != nil {
				t.Fatal(err)
			}
			if res := o.Execute(ctx, "w", "x"); res.Response.Success {
				t.Fatalf("removal %d: got %+v, want an unknown environment", i, res.Response)
			}
		}
	}
}

// TestSpecDirComesAndGoes: the env directory made after LoadSpecs, removed
// and made again is followed.
func TestSpecDirComesAndGoes(t *testing.T) {
	dir := t.TempDir()
	o := mustNew(t, trivialProcesses())
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		t.Helper()
		o.ReloadSpecs()
		return o.Names()
	}
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "a.json", shSpec("A"))
	if got := names(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("made: got %v, want [a]", got)
	}
	if err := os.RemoveAll(filepath.Join(dir, "env")); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 0 {
		t.Errorf("removed: got %v, want none", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "b.json", shSpec("B"))
	if got := names(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("made again: got %v, want [b]", got)
	}
}

// fakeWatch says what the test sets.
type fakeWatch struct {
	changed bool
	err     error
	closes  int
}

func (f *fakeWatch) Changed() (bool, error) {
	c := f.changed
	f.changed = false
	return c || f.err != nil, f.err
}

func (f *fakeWatch) Close() error { f.closes++; return nil }

// withWatch makes LoadSpecs use w (nil: no watch can be made) until the
// test ends.
func withWatch(t *testing.T, w specWatch) {
	t.Helper()
	old := newSpecWatch
	t.Cleanup(func() { newSpecWatch = old })
	newSpecWatch = func(string, func(string) bool) (specWatch, error) {
		if w == nil {
			return nil, errors.New("inotify: too many open files")
		}
		return w, nil
	}
}

// TestSpecWatchDecides: with a watch, the directory is read only when the
// watch saw a change (or the last reading failed); a watch that fails is
// closed and the directory read every time from then on; Close closes it.
func TestSpecWatchDecides(t *testing.T) {
	fake := &fakeWatch{}
	withWatch(t, fake)
	dir := writeProject(t, nil)
	o := mustNew(t, trivialProcesses())
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "a.json", shSpec("A"))
	o.ReloadSpecs()
	if got := o.Names(); len(got) != 0 {
		t.Fatalf("the watch saw nothing: got %v, want the directory not read", got)
	}
	fake.changed = true
	o.ReloadSpecs()
	if got := o.Names(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("the watch saw a change: got %v, want [a]", got)
	}

	// A reading that fails is done again next time, the watch silent.
	env := filepath.Join(dir, "env")
	if err := os.Rename(env, env+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake.changed = true
	o.ReloadSpecs()
	if got := o.Names(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("the reading failed: got %v, want [a] as it was", got)
	}
	if err := os.Remove(env); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(env+".away", env); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, dir, "b.json", shSpec("B"))
	o.ReloadSpecs()
	if got := o.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after a failed reading: got %v, want [a b]", got)
	}

	fake.err = errors.New("the watch is lost")
	o.ReloadSpecs()
	if fake.closes != 1 {
		t.Errorf("a failed watch: closed %d times, want 1", fake.closes)
	}
	fake.err = nil
	if err := os.Remove(filepath.Join(dir, "env", "a.json")); err != nil {
		t.Fatal(err)
	}
	o.ReloadSpecs()
	if got := o.Names(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("without the watch: got %v, want [b], the directory read", got)
	}

	fake2 := &fakeWatch{}
	withWatch(t, fake2)
	o2 := mustNew(t, trivialProcesses())
	if err := o2.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	if err := o2.Close(); err != nil {
		t.Fatal(err)
	}
	if fake2.closes != 1 {
		t.Errorf("Close: closed the watch %d times, want 1", fake2.closes)
	}
	writeSpec(t, dir, "c.json", shSpec("C"))
	o2.ReloadSpecs()
	if got := o2.Names(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after Close: got %v, want [b], nothing loaded", got)
	}
}

// TestSpecsWithoutWatch: where no watch can be made, every command reads
// the directory.
func TestSpecsWithoutWatch(t *testing.T) {
	withWatch(t, nil)
	dir := writeProject(t, nil)
	o := mustNew(t, trivialProcesses())
	defer o.Close()
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	writeSpec(t, dir, "a.json", shSpec("A"))
	if res := o.Execute(ctx, "a", "x"); !res.Response.Success {
		t.Errorf("added: got %+v, want the environment", res.Response)
	}
	if err := os.Remove(filepath.Join(dir, "env", "a.json")); err != nil {
		t.Fatal(err)
	}
	if res := o.Execute(ctx, "a", "x"); res.Response.Success {
		t.Errorf("removed: got %+v, want an unknown environment", res.Response)
	}
}

// TestGeneration: the generation changes with the environments and the
// spec files' errors, and only then.
func TestGeneration(t *testing.T) {
	dir := writeProject(t, map[string]string{"a.json": shSpec("A")})
	o := mustNew(t, trivialProcesses())
	defer o.Close()
	last := o.Generation()
	step := func(name string, change func(), want bool) {
		t.Helper()
		change()
		o.ReloadSpecs()
		g := o.Generation()
		if got := g != last; got != want {
			t.Errorf("%s: got changed %v, want %v", name, got, want)
		}
		last = g
	}
	step("registered", func() {
		if err := o.Register("code", &trivialEnv{}); err != nil {
			t.Fatal(err)
		}
	}, true)
	step("spec files loaded", func() {
		if err := o.LoadSpecs(dir); err != nil {
			t.Fatal(err)
		}
	}, true)
	step("nothing", func() {}, false)
	step("touched", func() {
		at := time.Now().Add(time.Minute)
		if err := os.Chtimes(filepath.Join(dir, "env", "a.json"), at, at); err != nil {
			t.Fatal(err)
		}
	}, false)
	step("a file that is not a spec", func() { writeSpec(t, dir, "notes.txt", "x") }, false)
	step("changed", func() { writeSpec(t, dir, "a.json", shSpec("A again")) }, true)
	step("a bad file", func() { writeSpec(t, dir, "bad.json", "{") }, true)
	step("the bad file bad the same way", func() { writeSpec(t, dir, "bad.json", "{ ") }, false)
	step("the bad file bad another way", func() { writeSpec(t, dir, "bad.json", "[]") }, true)
	step("removed", func() {
		if err := os.Remove(filepath.Join(dir, "env", "a.json")); err != nil {
			t.Fatal(err)
		}
	}, true)
}

// TestWithoutSpecReload: with spec reloads off, the environments stay as
// LoadSpecs made them; each file added, changed or removed afterwards is
// reported with the reason, and a file touched but not changed, or
// changed back, is not.
func TestWithoutSpecReload(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(fmt.Sprintf("watched=%v", watched), func(t *testing.T) {
			if !watched {
				withWatch(t, nil)
			}
			dir := writeProject(t, map[string]string{"a.json": shSpec("a as loaded"), "b.json": shSpec("b as loaded")})
			o := mustNew(t, trivialProcesses(), WithoutSpecReload("no environment runs programs"))
			defer o.Close()
			if err := o.LoadSpecs(dir); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			check := func(step string, want ...string) {
				t.Helper()
				if res := o.Execute(ctx, "a", "x"); !res.Response.Success {
					t.Fatalf("%s: a: %+v", step, res.Response)
				}
				if got := o.Names(); !slices.Equal(got, []string{"a", "b"}) {
					t.Errorf("%s: environments %v, want [a b] as loaded", step, got)
				}
				if got, _ := o.Summary("a"); got != "a as loaded" {
					t.Errorf("%s: a's summary %q, want the one loaded", step, got)
				}
				var got []string
				for _, err := range o.LoadErrors() {
					got = append(got, err.Error())
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: load errors\n%q\nwant\n%q", step, got, want)
				}
			}
			check("at the start")
			gen := o.Generation()

			writeSpec(t, dir, "pwn.json", shSpec("added"))
			writeSpec(t, dir, "a.json", shSpec("a changed"))
			if err := os.Remove(filepath.Join(dir, "env", "b.json")); err != nil {
				t.Fatal(err)
			}
			check("after changes",
				"env/a.json: changed after the environments were loaded; its environment stays as it was loaded, because no environment runs programs: start again to load the change",
				"env/pwn.json: added after the environments were loaded; not loaded, because no environment runs programs: start again to load the change",
				"env/b.json: removed after the environments were loaded; its environment stays, because no environment runs programs: start again to load the change")
			if o.Generation() == gen {
				t.Error("the generation did not change with the load errors")
			}

			writeSpec(t, dir, "b.json", shSpec("b as loaded"))
			writeSpec(t, dir, "a.json", shSpec("a as loaded"))
			if err := os.Remove(filepath.Join(dir, "env", "pwn.json")); err != nil {
				t.Fatal(err)
			}
			check("after changing back")

		})
	}
}

// TestWithoutSpecReloadBroken: a spec file that failed to load, then
// changed, has no environment to keep: the note says it is not loaded.
func TestWithoutSpecReloadBroken(t *testing.T) {
	dir := writeProject(t, map[string]string{"c.json": "{"})
	o := mustNew(t, trivialProcesses(), WithoutSpecReload("no environment runs programs"))
	defer o.Close()
	if err := o.LoadSpecs(dir); err == nil {
		t.Fatal("the broken file loaded")
	}
	writeSpec(t, dir, "c.json", shSpec("fixed"))
	o.ReloadSpecs()
	errs := o.LoadErrors()
	want := "env/c.json: changed after the environments were loaded; not loaded, because no environment runs programs: start again to load the change"
	if len(errs) != 2 || errs[1].Error() != want {
		t.Errorf("load errors: %v, want the first error and then %q", errs, want)
	}
	if names := o.Names(); len(names) != 0 {
		t.Errorf("environments: %v, want none", names)
	}
}

// heldClose is an environment whose Close waits for release, as a program
// given seconds to exit does.
type heldClose struct {
	trivialEnv
	release <-chan struct{}
	closed  atomic.Bool
}

func (e *heldClose) Close() error {
	<-e.release
	e.closed.Store(true)
	return nil
}

// TestServeLinesNotHeldByAReplacedClose: a spec file replaced under serve
// closes the environment it made apart from the line reader: while that
// close takes its time, the lines after it (another environment's command,
// an unknown environment's, a cancel) are answered; the end of serving
// waits for the close.
func TestServeLinesNotHeldByAReplacedClose(t *testing.T) {
	dir := writeProject(t, map[string]string{"held.json": shSpec("first")})
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	at := make(chan struct{})
	close(at)
	var made []*heldClose
	o := mustNew(t, WithProcesses(func(ProcessSpec) (envs.Env, error) {
		e := &heldClose{release: release}
		if len(made) > 0 {
			e.release = at // only the first one's close is held
		}
		made = append(made, e)
		return e, nil
	}))
	if err := o.LoadSpecs(dir); err != nil {
		t.Fatal(err)
	}
	if err := o.Register("other", &trivialEnv{}); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- o.Serve(context.Background(), inR, outW) }()
	lines := bufio.NewScanner(outR)
	send := func(line string) {
		t.Helper()
		if _, err := inW.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(want string) {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			if lines.Scan() {
				got <- lines.Text()
			}
			close(got)
		}()
		select {
		case l := <-got:
			if !strings.Contains(l, want) {
				t.Fatalf("got %s, want a line with %s", l, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer within 30s, want a line with %s", want)
		}
	}
	send(`{"type":"command","id":"1","environment":"held","command":"x"}`)
	answer(`"id":"1"`)
	writeSpec(t, dir, "held.json", shSpec("second"))
	send(`{"type":"command","id":"2","environment":"other","command":"x"}`)
	answer(`"id":"2"`)
	send(`{"type":"command","id":"3","environment":"nope","command":"x"}`)
	answer(`Unknown environment: nope`)
	send(`{"type":"command","id":"4","environment":"held","command":"C-c"}`)
	answer(`"id":"4"`)
	if len(made) != 2 || made[0].closed.Load() {
		t.Fatalf("got %d environments made, the first closed: %v; want 2, the first still closing", len(made), len(made) > 0 && made[0].closed.Load())
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case err := <-served:
		t.Fatalf("serving ended (%v) while the replaced environment was still closing", err)
	case <-time.After(200 * time.Millisecond):
	}
	once.Do(func() { close(release) })
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if !made[0].closed.Load() {
		t.Error("serving ended before the replaced environment was closed")
	}
}

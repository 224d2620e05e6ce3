package orchestrator

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
)

// trivialEnv costs nothing: a fixed response and a fixed screen, drawn
// apart from the caller as the screens of environments that do not say
// they are quick are.
type trivialEnv struct{ screen envs.Screen }

// quickEnv is a trivialEnv whose screen is drawn by the caller, as the
// built-in environments' are.
type quickEnv struct{ trivialEnv }

func (quickEnv) QuickScreen() {}

func (e *trivialEnv) Execute(context.Context, string) (envs.Response, error) {
	return envs.Response{Output: "ok", Success: true}, nil
}

func (e *trivialEnv) Screen() (envs.Screen, error) { return e.screen, nil }

func fiveTrivial(b *testing.B, opts ...Option) *Orchestrator {
	return five(b, true, opts...)
}

// five registers five trivial environments, quick ones or not.
func five(b *testing.B, quick bool, opts ...Option) *Orchestrator {
	o := mustNew(b, opts...)
	for i := range 5 {
		t := trivialEnv{screen: envs.Screen{Content: fmt.Sprintf("Environment %d\nstate: ready\nCommands:\n  run <x> - run x\n  stop - stop", i)}}
		var e envs.Env = &t
		if quick {
			e = &quickEnv{t}
		}
		if err := o.Register(fmt.Sprintf("env%d", i), e); err != nil {
			b.Fatal(err)
		}
	}
	return o
}

// BenchmarkExecute is one round trip through Execute plus screen collection
// with five environments of trivial cost, quick ones (as the built-in
// environments are) unless their screens are handed off.
func BenchmarkExecute(b *testing.B) {
	b.Run("no session", func(b *testing.B) {
		o := fiveTrivial(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			o.Execute(ctx, "env2", "run x")
		}
	})
	b.Run("with session", func(b *testing.B) {
		o := fiveTrivial(b, WithSession(session.New()))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			o.Execute(ctx, "env2", "run x")
		}
	})
	b.Run("screens handed off", func(b *testing.B) {
		o := five(b, false)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			o.Execute(ctx, "env2", "run x")
		}
	})
}

// BenchmarkServe is one command line in and one response line out through
// Serve over in-process pipes, five trivial environments.
func BenchmarkServe(b *testing.B) {
	o := fiveTrivial(b)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error)
	go func() { done <- o.Serve(context.Background(), inR, outW) }()
	lines := bufio.NewReaderSize(outR, 1<<20)
	msg := []byte(`{"type":"command","environment":"env2","command":"run x"}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inW.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := lines.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commands/s")
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkDecodeMessage(b *testing.B) {
	line := []byte(`{"type":"command","environment":"bash","command":"ls -la","timeout":5}`)
	b.ReportAllocs()
	for b.Loop() {
		decodeMessage(line)
	}
}

// BenchmarkProcess is one command and one screen through a process
// environment (this test binary as the child).
func BenchmarkProcess(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewProcess(ProcessSpec{Name: "counter", Executable: exe, Env: fakeVars("counter")})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	p.Screen()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, "inc"); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Screen(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReloadSpecs is what every command pays to pick up spec file
// changes when none happened, in a project with two spec files: the
// watched env directory, and the directory read every time (where no watch
// can be made).
func BenchmarkReloadSpecs(b *testing.B) {
	for _, bc := range []struct {
		name  string
		watch bool
	}{{"watched", true}, {"read every time", false}} {
		b.Run(bc.name, func(b *testing.B) {
			if !bc.watch {
				old := newSpecWatch
				defer func() { newSpecWatch = old }()
				newSpecWatch = func(string, func(string) bool) (specWatch, error) { return nil, errors.ErrUnsupported }
			}
			dir := b.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
				b.Fatal(err)
			}
			for _, name := range []string{"a.json", "b.json"} {
				writeSpec(b, dir, name, shSpec(name))
			}
			writeSpec(b, dir, "a.sh", "true")
			o := mustNew(b, trivialProcesses())
			defer o.Close()
			if err := o.LoadSpecs(dir); err != nil {
				b.Fatal(err)
			}
			if got := o.specs.watch != nil; got != bc.watch {
				b.Fatalf("watched: got %v, want %v", got, bc.watch)
			}
			gen := o.Generation()
			b.ReportAllocs()
			for b.Loop() {
				o.ReloadSpecs()
			}
			if o.Generation() != gen || len(o.Names()) != 2 {
				b.Fatalf("the environments changed: %v", o.Names())
			}
		})
	}
}

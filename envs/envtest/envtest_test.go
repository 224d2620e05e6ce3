package envtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// Faults the fake environment can have; each should fail one check.
const (
	good               = "good"
	screenErrors       = "screen errors"
	negativeMaxLines   = "negative max lines"
	multiLineSummary   = "multi-line summary"
	trivialFails       = "trivial fails"
	screenWaits        = "screen waits for execute"
	blockReturns       = "blocking command returns at once"
	ignoresCancel      = "ignores cancel"
	cancelSucceeds     = "cancelled command succeeds"
	closePanics        = "second close panics"
	closeErrors        = "second close errors"
	worksAfterClose    = "works after close"
	hangsAfterClose    = "hangs after close"
	failsAfterClose    = "fails after close with a response"
	otherErrAfterClose = "fails after close with another error"
	hugeBreaks         = "huge command breaks it"
	hugeErrors         = "huge command errors"
	emptyPanics        = "empty command panics"
	emptyErrors        = "empty command errors"
	emptyHangs         = "empty command hangs"
	executeErrorsOnce  = "blocking command errors"
)

// fake is an environment with one configurable fault. Its commands: "ok"
// succeeds, "block" waits for its context, anything else is unknown.
type fake struct {
	fault   string
	release chan struct{} // closed when the test ends, freeing hung calls

	run sync.Mutex // held for a whole command under the screenWaits fault

	mu     sync.Mutex // guards closed, closes and broken
	closed bool
	closes int
	broken bool
}

func (f *fake) Execute(ctx context.Context, command string) (envs.Response, error) {
	if f.fault == screenWaits {
		f.run.Lock()
		defer f.run.Unlock()
	}
	f.mu.Lock()
	closed, broken := f.closed, f.broken
	f.mu.Unlock()
	if closed {
		switch f.fault {
		case worksAfterClose:
			return envs.Response{Output: "fine", Success: true}, nil
		case hangsAfterClose:
			<-f.release
		case failsAfterClose:
			return envs.Response{Output: "closed"}, nil
		case otherErrAfterClose:
			return envs.Response{}, errors.New("closed")
		}
		return envs.Response{}, fmt.Errorf("fake: execute: %w", envs.ErrClosed)
	}
	if broken {
		return envs.Response{Output: "broken"}, nil
	}
	if len(command) > 1000 {
		switch f.fault {
		case hugeBreaks:
			f.mu.Lock()
			f.broken = true
			f.mu.Unlock()
		case hugeErrors:
			return envs.Response{}, errors.New("too long")
		}
		return envs.Response{Output: "unknown"}, nil
	}
	switch strings.TrimSpace(command) {
	case "":
		switch f.fault {
		case emptyPanics:
			panic("empty")
		case emptyErrors:
			return envs.Response{}, errors.New("empty")
		case emptyHangs:
			<-f.release
		}
		return envs.Response{Output: "empty"}, nil
	case "ok":
		if f.fault == trivialFails {
			return envs.Response{Output: "no"}, nil
		}
		return envs.Response{Output: "ok", Success: true}, nil
	case "block":
		switch f.fault {
		case ignoresCancel:
			<-f.release
		case blockReturns:
			return envs.Response{Output: "done", Success: true}, nil
		case executeErrorsOnce:
			return envs.Response{}, errors.New("lost the process")
		}
		<-ctx.Done()
		if f.fault == cancelSucceeds {
			return envs.Response{Output: "done", Success: true}, nil
		}
		return envs.Response{Output: "interrupted"}, nil
	}
	return envs.Response{Output: "unknown"}, nil
}

func (f *fake) Screen() (envs.Screen, error) {
	switch f.fault {
	case screenWaits:
		f.run.Lock()
		defer f.run.Unlock()
	case screenErrors:
		return envs.Screen{}, errors.New("no screen")
	case negativeMaxLines:
		return envs.Screen{Content: "x", MaxLines: -1}, nil
	}
	return envs.Screen{Content: "fake"}, nil
}

func (f *fake) Summary() string {
	if f.fault == multiLineSummary {
		return "Fake\nenvironment"
	}
	return "Fake environment"
}

func (f *fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.closes++
	if f.closes > 1 {
		switch f.fault {
		case closePanics:
			panic("closed twice")
		case closeErrors:
			return errors.New("already closed")
		}
	}
	return nil
}

// recorder collects what checks report instead of failing the test.
type recorder struct {
	mu      sync.Mutex // guards everything below
	errors  []string
	skipped bool
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Skipf(string, ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skipped = true
}

const testTimeout = 300 * time.Millisecond

// runCheck runs the named check on a fake with fault and returns what it
// reported.
func runCheck(t *testing.T, name, fault string, cfg config, wrap func(*fake) envs.Env) *recorder {
	t.Helper()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rec := &recorder{}
	s := &suite{cfg: cfg, newEnv: func() envs.Env { return wrap(&fake{fault: fault, release: release}) }}
	for _, c := range checks {
		if c.name == name {
			c.run(rec, s)
			return rec
		}
	}
	t.Fatalf("no check named %s", name)
	return nil
}

func asIs(f *fake) envs.Env { return f }

// notCloser hides the fake's Close.
type notCloser struct{ envs.Env }

func hideClose(f *fake) envs.Env { return notCloser{f} }

var fullConfig = config{Trivial: "ok", Blocking: "block", Timeout: testTimeout}

// limitChecks are the checks of the soft limits, which skip without the
// commands they need (see limits_test.go).
var limitChecks = []string{"SoftLimit", "DefaultLimit", "Continue", "Refused", "Input", "Budget", "WholeOutput", "Queue"}

func TestChecksCatchFaults(t *testing.T) {
	tests := []struct {
		check string
		fault string
	}{
		{"Screen", screenErrors},
		{"Screen", negativeMaxLines},
		{"Screen", multiLineSummary},
		{"Trivial", trivialFails},
		{"ConcurrentScreen", screenWaits},
		{"ConcurrentScreen", blockReturns},
		{"ConcurrentScreen", executeErrorsOnce},
		{"Cancel", ignoresCancel},
		{"Cancel", blockReturns},
		{"Cancel", cancelSucceeds},
		{"Cancel", executeErrorsOnce},
		{"CloseTwice", closePanics},
		{"CloseTwice", closeErrors},
		{"ExecuteAfterClose", worksAfterClose},
		{"ExecuteAfterClose", hangsAfterClose},
		{"ExecuteAfterClose", failsAfterClose},
		{"ExecuteAfterClose", otherErrAfterClose},
		{"HugeCommand", hugeBreaks},
		{"HugeCommand", hugeErrors},
		{"EmptyCommand", emptyPanics},
		{"EmptyCommand", emptyErrors},
		{"EmptyCommand", emptyHangs},
	}
	for _, tt := range tests {
		t.Run(tt.check+"/"+tt.fault, func(t *testing.T) {
			rec := runCheck(t, tt.check, tt.fault, fullConfig, asIs)
			if len(rec.errors) == 0 {
				t.Errorf("got no failure from %s for an environment whose %s, want one", tt.check, tt.fault)
			}
			for _, e := range rec.errors {
				t.Logf("reported: %s", e)
			}
		})
	}
}

func TestChecksPassGoodEnv(t *testing.T) {
	tests := []struct {
		name        string
		cfg         config
		wrap        func(*fake) envs.Env
		wantSkipped []string
	}{
		{"full config", fullConfig, asIs, limitChecks},
		{"no blocking command", config{Trivial: "ok", Timeout: testTimeout}, asIs, append([]string{"Cancel"}, limitChecks...)},
		{"not a closer", fullConfig, hideClose, append([]string{"CloseTwice", "ExecuteAfterClose"}, limitChecks...)},
	}
	for _, tt := range tests {
		for _, c := range checks {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				rec := runCheck(t, c.name, good, tt.cfg, tt.wrap)
				if len(rec.errors) > 0 {
					t.Errorf("got failures %q, want none", rec.errors)
				}
				wantSkip := false
				for _, s := range tt.wantSkipped {
					wantSkip = wantSkip || s == c.name
				}
				if rec.skipped != wantSkip {
					t.Errorf("got skipped %v, want %v", rec.skipped, wantSkip)
				}
			})
		}
	}
}

// TestRun runs the suite the way users do.
func TestRun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	Run(t, func(*testing.T) envs.Env { return &fake{fault: good, release: release} }, fullConfig.Trivial, WithBlocking(fullConfig.Blocking), WithTimeout(fullConfig.Timeout))
}

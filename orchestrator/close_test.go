package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// TestCloseReleasesStuckCommand closes the orchestrator while a command
// runs in an environment that ignores its context: the call returns,
// saying the orchestrator shut down, instead of waiting for the quiet
// limit and inviting a wait on an environment that is closed.
func TestCloseReleasesStuckCommand(t *testing.T) {
	o := mustNew(t)
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	env := &testEnv{execute: func(context.Context, string) (envs.Response, error) {
		close(started)
		<-release
		return envs.Response{Output: "done", Success: true}, nil
	}}
	if err := o.Register("stuck", env, Limits(envs.Defaults{Quiet: time.Hour, Wait: time.Hour})); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- o.Run(context.Background(), Command{Environment: "stuck", Text: "x"}) }()
	<-started
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		want := envs.Response{Output: "The orchestrator shut down while the command ran in stuck, and closed it; no environment accepts commands."}
		if r.Response != want {
			t.Errorf("got %+v, want %+v", r.Response, want)
		}
	case <-time.After(time.Minute): // the call returns within 2 s of Close
		t.Fatal("the call still waits a minute after Close")
	}
}

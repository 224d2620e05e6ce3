package orchestrator

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
)

// TestScreensDoNotHoldTheResponse: an environment whose screen waits for
// its running handler (its State takes the lock the handler holds, as in
// examples/timer) does not hold the responses of commands past their time
// limits: they come with the last screen it drew, marked, and a fresh one
// once it draws again.
func TestScreensDoNotHoldTheResponse(t *testing.T) {
	var mu sync.Mutex
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	slow, err := envs.NewDeclarative("slow", nil, envs.DeclarativeSpec{
		Description: "holds its lock while it works",
		Commands: []envs.Command{{Signature: "work", Description: "Work until released.", Handler: func(context.Context, string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			<-release
			return "worked", nil
		}}},
		State: func() string {
			mu.Lock()
			defer mu.Unlock()
			return "idle state"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := envs.NewDeclarative("other", nil, envs.DeclarativeSpec{
		Description: "answers at once",
		Commands:    []envs.Command{{Signature: "ping", Description: "Answer pong.", Handler: func(context.Context, string) (string, error) { return "pong", nil }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := mustNew(t)
	defer o.Close()
	// tail's screen comes after slow's (names are sorted): it is drawn
	// while slow's waits.
	tail, err := envs.NewDeclarative("tail", nil, envs.DeclarativeSpec{
		Description: "drawn after slow",
		Commands:    []envs.Command{{Signature: "noop", Description: "Do nothing.", Handler: func(context.Context, string) (string, error) { return "", nil }}},
		State:       func() string { return "tail state" },
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]envs.Env{"slow": slow, "other": other, "tail": tail} {
		if err := o.Register(name, e); err != nil {
			t.Fatal(err)
		}
	}
	if res := o.Run(context.Background(), Command{Environment: "other", Text: "ping"}); !strings.Contains(res.Screens["slow"].Content, "idle state") {
		t.Fatalf("first screen: got %q, want the state", res.Screens["slow"].Content)
	}
	run := func(env, text string) Result {
		t.Helper()
		got := make(chan Result, 1)
		go func() {
			got <- o.Run(context.Background(), Command{Environment: env, Text: text, Timeout: 200 * time.Millisecond})
		}()
		select {
		case res := <-got:
			return res
		case <-time.After(time.Minute):
			t.Fatalf("%s %q: no response within a minute", env, text)
			panic("unreachable")
		}
	}
	const stale = "[slow did not draw its screen in time: this is the one it drew "
	res := run("slow", "work")
	if !res.Response.Running {
		t.Errorf("work: got %+v, want it running on", res.Response)
	}
	if got := res.Screens["slow"].Content; !strings.HasPrefix(got, stale) || !strings.Contains(got, "idle state") {
		t.Errorf("screen while the handler holds the lock: got %q, want the last one, marked", got)
	}
	if got := res.Screens["tail"].Content; !strings.HasPrefix(got, "tail state") {
		t.Errorf("the screen after slow's: got %q, want it drawn, not held", got)
	}
	res = run("other", "ping")
	if got := res.Screens["slow"].Content; res.Response.Output != "pong" || !strings.HasPrefix(got, stale) {
		t.Errorf("another environment's command: got %+v, slow's screen %q; want pong and the last screen, marked", res.Response, got)
	}
	once.Do(func() { close(release) })
	for range 100 {
		if res = run("slow", ""); !res.Response.Running {
			break
		}
	}
	if got := res.Screens["slow"].Content; strings.Contains(got, stale) || !strings.Contains(got, "idle state") {
		t.Errorf("once the handler is done: got %q, want a fresh screen", got)
	}
}

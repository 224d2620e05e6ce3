package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/editor"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/envs/python"
)

// pinger is an environment that answers "pong" to ping at once.
func pinger(t *testing.T) envs.Env {
	t.Helper()
	e, err := envs.NewDeclarative("other", nil, envs.DeclarativeSpec{
		Description: "answers at once",
		Commands:    []envs.Command{{Signature: "ping", Description: "Answer pong.", Handler: func(context.Context, string) (string, error) { return "pong", nil }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

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
	other := pinger(t)
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

// TestScreenDrawnBeforeTheCommandEndedIsNotFresh: a drawing of an
// environment's screen that began (for another command's response) before
// a command to it ended may show the state from before; that command's
// response waits for it and draws the screen again, instead of taking it
// as fresh.
func TestScreenDrawnBeforeTheCommandEndedIsNotFresh(t *testing.T) {
	var count atomic.Int64
	drawing := make(chan struct{}, 1)
	counter, err := envs.NewDeclarative("counter", nil, envs.DeclarativeSpec{
		Description: "counts",
		Commands: []envs.Command{{Signature: "inc", Description: "Add one.", Handler: func(context.Context, string) (string, error) {
			return fmt.Sprint("now ", count.Add(1)), nil
		}}},
		State: func() string {
			n := count.Load()
			select {
			case drawing <- struct{}{}:
			default:
			}
			time.Sleep(100 * time.Millisecond)
			return fmt.Sprint("count=", n)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	other := pinger(t)
	o := mustNew(t)
	defer o.Close()
	for name, e := range map[string]envs.Env{"counter": counter, "other": other} {
		if err := o.Register(name, e); err != nil {
			t.Fatal(err)
		}
	}
	pinged := make(chan Result, 1)
	go func() { pinged <- o.Run(context.Background(), Command{Environment: "other", Text: "ping"}) }()
	<-drawing // counter's screen is being drawn for ping's response, reading 0
	res := o.Run(context.Background(), Command{Environment: "counter", Text: "inc"})
	if got := res.Screens["counter"].Content; res.Response.Output != "now 1" || !strings.HasPrefix(got, "count=1") {
		t.Errorf("inc: got %q and the screen %q, want now 1 and count=1", res.Response.Output, got)
	}
	if got := (<-pinged).Screens["counter"].Content; !strings.HasPrefix(got, "count=0") {
		t.Errorf("ping, sent first: got the screen %q, want count=0", got)
	}
}

// TestScreenBegunBeforeTheCommandEndedMarkedWhenLate: when the drawing
// begun before the command ended takes past the command's time limit, the
// response shows the screen drawn last, marked as such.
func TestScreenBegunBeforeTheCommandEndedMarkedWhenLate(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	var block atomic.Bool
	drawing := make(chan struct{}, 1)
	env, err := envs.NewDeclarative("held", nil, envs.DeclarativeSpec{
		Description: "draws slowly when told",
		Commands:    []envs.Command{{Signature: "noop", Description: "Do nothing.", Handler: func(context.Context, string) (string, error) { return "done", nil }}},
		State: func() string {
			if block.Load() {
				drawing <- struct{}{}
				<-release
			}
			return "held state"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := mustNew(t)
	defer o.Close()
	if err := o.Register("held", env); err != nil {
		t.Fatal(err)
	}
	if got := o.Screens()["held"].Content; !strings.HasPrefix(got, "held state") {
		t.Fatalf("first screen: got %q", got)
	}
	block.Store(true)
	go o.Screens()
	<-drawing
	block.Store(false)
	res := o.Run(context.Background(), Command{Environment: "held", Text: "noop", Timeout: 100 * time.Millisecond})
	if got := res.Screens["held"].Content; !strings.HasPrefix(got, "[held did not draw its screen in time: this is the one it drew ") || !strings.Contains(got, "held state") {
		t.Errorf("screen: got %q, want the last one drawn, marked", got)
	}
}

// quickSlowEnv says its screen is quick, and then takes its time.
type quickSlowEnv struct{ trivialEnv }

func (quickSlowEnv) QuickScreen() {}

func (e quickSlowEnv) Screen() (envs.Screen, error) {
	time.Sleep(400 * time.Millisecond)
	return e.screen, nil
}

// TestQuickScreensDrawnByTheCaller: a quick screen ([QuickScreener]) is
// drawn on the caller's goroutine and waited for, past the command's time
// limit too, as its environment promises it does not block; the others are
// not held by it.
func TestQuickScreensDrawnByTheCaller(t *testing.T) {
	o := mustNew(t)
	defer o.Close()
	if err := o.Register("quick", &quickSlowEnv{trivialEnv{screen: envs.Screen{Content: "quick state"}}}); err != nil {
		t.Fatal(err)
	}
	if err := o.Register("plain", &trivialEnv{screen: envs.Screen{Content: "plain state"}}); err != nil {
		t.Fatal(err)
	}
	res := o.Run(context.Background(), Command{Environment: "plain", Text: "x", Timeout: time.Millisecond})
	for name, want := range map[string]string{"quick": "quick state", "plain": "plain state"} {
		if got := res.Screens[name].Content; got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// The built-in environments' screens are quick.
var (
	_ QuickScreener = (*bash.Shell)(nil)
	_ QuickScreener = (*python.REPL)(nil)
	_ QuickScreener = (*interactive.Env)(nil)
	_ QuickScreener = (*editor.Editor)(nil)
)

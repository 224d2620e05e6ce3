package envs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/envtest"
	"github.com/unfold-dev/unfold/session"
)

// testCommands is a command set exercising every outcome a handler can have.
func testCommands() []envs.Command {
	return []envs.Command{
		{Signature: "echo <text>", Description: "Print the text.", Example: "echo hi",
			Handler: func(_ context.Context, args string) (string, error) { return args, nil }},
		{Signature: "quote <text>", Description: "Print the text in quotes.", Example: "quote hi",
			Handler: func(_ context.Context, args string) (string, error) { return fmt.Sprintf("%q", args), nil }},
		{Signature: "fail", Description: "Fail.",
			Handler: func(context.Context, string) (string, error) { return "", errors.New("disk full") }},
		{Signature: "partial", Description: "Print something, then fail.",
			Handler: func(context.Context, string) (string, error) { return "wrote 3 files\n", errors.New("fourth failed") }},
		{Signature: "boom", Description: "Panic.",
			Handler: func(context.Context, string) (string, error) { panic("kaboom") }},
		{Signature: "block", Description: "Wait until cancelled.",
			Handler: func(ctx context.Context, _ string) (string, error) { <-ctx.Done(); return "", ctx.Err() }},
	}
}

func newTestEnv(t testing.TB, sess *session.Session) *envs.Declarative {
	t.Helper()
	d, err := envs.NewDeclarative("test", sess, envs.DeclarativeSpec{Description: "Test environment", Commands: testCommands()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const available = "\nAvailable: block, boom, echo, fail, partial, quote"

func TestExecute(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    envs.Response
	}{
		{"args", "echo hello world", envs.Response{Output: "hello world", Success: true}},
		{"no args", "echo", envs.Response{Output: "", Success: true}},
		{"leading white space", " \n\techo  hi  ", envs.Response{Output: "hi", Success: true}},
		{"trailing newline", "quote hi\n", envs.Response{Output: `"hi"`, Success: true}},
		{"content lines", "quote notes.md\n# Notes\n  indented\n", envs.Response{Output: `"notes.md\n# Notes\n  indented"`, Success: true}},
		{"content without first-line args", "quote\n  body", envs.Response{Output: `"\n  body"`, Success: true}},
		{"tab after name", "quote\ta b", envs.Response{Output: `"a b"`, Success: true}},
		{"unknown", "jump high", envs.Response{Output: "Unknown command: jump" + available}},
		{"case matters", "ECHO hi", envs.Response{Output: "Unknown command: ECHO" + available}},
		{"unknown long name clipped", strings.Repeat("x", 200), envs.Response{Output: "Unknown command: " + strings.Repeat("x", 80) + "..." + available}},
		{"unknown invalid UTF-8", "\xff\xfe", envs.Response{Output: "Unknown command: \uFFFD" + available}},
		{"empty", "", envs.Response{Output: "Empty command: write a command name, then its arguments" + available}},
		{"blank", " \n\t ", envs.Response{Output: "Empty command: write a command name, then its arguments" + available}},
		{"handler error", "fail", envs.Response{Output: "Error: disk full"}},
		{"handler error with output", "partial", envs.Response{Output: "wrote 3 files\nError: fourth failed"}},
		{"handler panic", "boom", envs.Response{Output: "Error: panic: kaboom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestEnv(t, nil)
			got, err := d.Execute(context.Background(), tt.command)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			// A cancellable context takes the other path through Execute.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got, err = d.Execute(ctx, tt.command)
			if err != nil || got != tt.want {
				t.Errorf("with a cancellable context: got %+v, %v; want %+v, nil", got, err, tt.want)
			}
		})
	}
}

func TestExecuteRecordsUsage(t *testing.T) {
	tests := []struct {
		name     string
		commands []string
		want     []string
	}{
		{"none", nil, nil},
		{"success", []string{"echo a"}, []string{"echo"}},
		{"failure counts", []string{"fail"}, []string{"fail"}},
		{"panic counts", []string{"boom"}, []string{"boom"}},
		{"unknown does not", []string{"jump", ""}, nil},
		{"repeats once", []string{"echo a", "quote b", "echo c"}, []string{"echo", "quote"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := session.New()
			d := newTestEnv(t, sess)
			for _, c := range tt.commands {
				if _, err := d.Execute(context.Background(), c); err != nil {
					t.Fatal(err)
				}
			}
			got := envs.GetUsage(sess).Commands("test")
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got used %v, want %v", got, tt.want)
			}
			if n := len(sess.Events()); n != len(tt.want) {
				t.Errorf("got %d events, want %d (one per first use)", n, len(tt.want))
			}
		})
	}
}

func TestExecuteCancel(t *testing.T) {
	d := newTestEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan envs.Response)
	go func() {
		r, err := d.Execute(ctx, "block")
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	cancel()
	r := <-done
	if r.Success {
		t.Errorf("got success for a cancelled command: %+v", r)
	}
	r, err := d.Execute(context.Background(), "echo still here")
	if err != nil || r != (envs.Response{Output: "still here", Success: true}) {
		t.Errorf("after cancel: got %+v, %v; want success", r, err)
	}
}

func TestExecuteCancelledBeforeStart(t *testing.T) {
	d := newTestEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := d.Execute(ctx, "echo hi")
	want := envs.Response{Output: "Interrupted before start: context canceled"}
	if err != nil || r != want {
		t.Errorf("got %+v, %v; want %+v, nil", r, err, want)
	}
}

func TestExecuteAbandonsStuckHandler(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	d, err := envs.NewDeclarative("stuck", nil, envs.DeclarativeSpec{
		Description: "Stuck",
		Commands: []envs.Command{
			{Signature: "hang", Description: "Ignore cancellation.", Handler: func(context.Context, string) (string, error) {
				close(started)
				<-release
				return "released", nil
			}},
			{Signature: "ping", Description: "Answer.", Handler: func(context.Context, string) (string, error) { return "pong", nil }},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	r, err := d.Execute(ctx, "hang")
	if err != nil || r.Success || !strings.HasPrefix(r.Output, "Interrupted: context canceled\n") {
		t.Errorf("got %+v, %v; want an Interrupted failure", r, err)
	}
	// The next command waits for the stuck one; with a cancelled context it
	// gives up instead.
	r, err = d.Execute(cancelledAfterStart(), "ping")
	if err != nil || r.Success {
		t.Errorf("while stuck: got %+v, %v; want a failure", r, err)
	}
	if s, err := d.Screen(); err != nil || s.Content == "" {
		t.Errorf("Screen while stuck: got %q, %v", s.Content, err)
	}
	close(release)
	r, err = d.Execute(context.Background(), "ping")
	if err != nil || r != (envs.Response{Output: "pong", Success: true}) {
		t.Errorf("after release: got %+v, %v; want pong", r, err)
	}
}

// cancelledAfterStart returns a context that is cancelled shortly after
// Execute starts waiting: its Done channel closes from another goroutine.
func cancelledAfterStart() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	return ctx
}

func TestClose(t *testing.T) {
	closeErr := errors.New("flush failed")
	calls := 0
	d, err := envs.NewDeclarative("closing", nil, envs.DeclarativeSpec{
		Description: "Closing",
		Commands:    timerCommands(),
		Close:       func() error { calls++; return closeErr },
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := d.Close(); !errors.Is(err, closeErr) {
			t.Errorf("Close #%d: got %v, want %v", i+1, err, closeErr)
		}
	}
	if calls != 1 {
		t.Errorf("got %d calls of the spec's Close, want 1", calls)
	}
	r, err := d.Execute(context.Background(), "start")
	if !errors.Is(err, envs.ErrClosed) || r.Success {
		t.Errorf("after Close: got %+v, %v; want an error wrapping ErrClosed", r, err)
	}
}

func TestClosePanic(t *testing.T) {
	d, err := envs.NewDeclarative("closing", nil, envs.DeclarativeSpec{
		Description: "Closing",
		Commands:    timerCommands(),
		Close:       func() error { panic("oops") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err == nil || !strings.Contains(err.Error(), "panic: oops") {
		t.Errorf("got %v, want an error mentioning the panic", err)
	}
}

func TestScreenStatePanics(t *testing.T) {
	d, err := envs.NewDeclarative("broken", nil, envs.DeclarativeSpec{
		Description: "Broken",
		Commands:    timerCommands(),
		State:       func() string { panic("no state") },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Screen()
	want := "envs: broken: screen: state display panicked: no state"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestNewDeclarativeErrors(t *testing.T) {
	good := envs.Command{Signature: "go", Description: "Go.", Handler: ok}
	tests := []struct {
		name string
		env  string
		spec envs.DeclarativeSpec
		want string
	}{
		{"empty name", "", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{good}},
			`envs: new declarative "": the name must be an identifier (a letter or _, then letters, digits or _)`},
		{"name with dash", "my-env", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{good}},
			`envs: new declarative "my-env": the name must be an identifier (a letter or _, then letters, digits or _)`},
		{"name starting with digit", "1env", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{good}},
			`envs: new declarative "1env": the name must be an identifier (a letter or _, then letters, digits or _)`},
		{"no description", "e", envs.DeclarativeSpec{Commands: []envs.Command{good}},
			`envs: new declarative "e": empty description; say in one line what the environment is for`},
		{"multi-line description", "e", envs.DeclarativeSpec{Description: "a\nb", Commands: []envs.Command{good}},
			`envs: new declarative "e": description spans lines; keep it to one`},
		{"no commands", "e", envs.DeclarativeSpec{Description: "d"},
			`envs: new declarative "e": no commands; give at least one`},
		{"negative max lines", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{good}, MaxLines: -1},
			`envs: new declarative "e": MaxLines is -1; use 0 for the default or a positive height`},
		{"empty signature", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{good, {Signature: " ", Description: "x", Handler: ok}}},
			`envs: new declarative "e": command 2: empty signature; start it with the command's name`},
		{"multi-line signature", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{{Signature: "a\nb", Description: "x", Handler: ok}}},
			`envs: new declarative "e": command 1: signature "a\nb" spans lines; keep it to one`},
		{"no command description", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{{Signature: "a <x>", Handler: ok}}},
			`envs: new declarative "e": command 1: command "a" has no description; say what it does`},
		{"multi-line summary", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{{Signature: "a", Description: "x", Summary: "1\n2", Handler: ok}}},
			`envs: new declarative "e": command 1: command "a": summary spans lines; keep it to one`},
		{"no handler", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{{Signature: "a", Description: "x"}}},
			`envs: new declarative "e": command 1: command "a" has no handler`},
		{"fence in example", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{{Signature: "a", Description: "x", Example: "a\n```", Handler: ok}}},
			"envs: new declarative \"e\": command 1: command \"a\": example line \"```\" would close its code fence"},
		{"duplicate name", "e", envs.DeclarativeSpec{Description: "d", Commands: []envs.Command{good, {Signature: "go <fast>", Description: "x", Handler: ok}}},
			`envs: new declarative "e": command 2: name "go" is already used by another command`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := envs.NewDeclarative(tt.env, nil, tt.spec)
			if err == nil {
				t.Fatalf("got %v, nil; want error %s", d, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("got error %s, want %s", err, tt.want)
			}
		})
	}
}

func TestCommandName(t *testing.T) {
	tests := []struct{ signature, want string }{
		{"view <file> /<start>/ /<end>/", "view"},
		{"  start  ", "start"},
		{"next_match <id>", "next_match"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.signature, func(t *testing.T) {
			if got := (envs.Command{Signature: tt.signature}).Name(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	d := newTestEnv(t, nil)
	if got, want := d.Summary(), "Test environment"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := d.Name(), "test"; got != want {
		t.Errorf("got name %q, want %q", got, want)
	}
}

// TestConcurrent runs commands and screens from many goroutines; run it with
// -race. State shares data with a handler under the author's own mutex.
func TestConcurrent(t *testing.T) {
	var mu sync.Mutex // guards count
	count := 0
	d, err := envs.NewDeclarative("counter", nil, envs.DeclarativeSpec{
		Description: "Counter",
		Commands: []envs.Command{{Signature: "inc", Description: "Add one.", Example: "inc",
			Handler: func(context.Context, string) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				count++
				return fmt.Sprint(count), nil
			}}},
		State: func() string {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Sprintf("Count: %d", count)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range rounds {
				if r, err := d.Execute(ctx, "inc"); err != nil || !r.Success {
					t.Errorf("inc: got %+v, %v", r, err)
				}
				if _, err := d.Screen(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	s, err := d.Screen()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Count: %d\n\nCommands:\n  inc - Add one", workers*rounds)
	if s.Content != want {
		t.Errorf("got screen %q, want %q", s.Content, want)
	}
}

// TestScreenDuringHandler checks that Screen answers while a handler runs.
func TestScreenDuringHandler(t *testing.T) {
	inside := make(chan struct{})
	release := make(chan struct{})
	d, err := envs.NewDeclarative("slow", nil, envs.DeclarativeSpec{
		Description: "Slow",
		Commands: []envs.Command{{Signature: "work", Description: "Work until released.", Example: "work",
			Handler: func(context.Context, string) (string, error) {
				close(inside)
				<-release
				return "done", nil
			}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan envs.Response)
	go func() {
		r, _ := d.Execute(context.Background(), "work")
		done <- r
	}()
	<-inside
	s, err := d.Screen() // would deadlock if Screen waited for the handler
	if err != nil {
		t.Fatal(err)
	}
	if want := "Slow\n\nCommands:\n  work - Work until released"; s.Content != want {
		t.Errorf("got screen %q, want %q (used as soon as it started)", s.Content, want)
	}
	close(release)
	if r := <-done; r != (envs.Response{Output: "done", Success: true}) {
		t.Errorf("got %+v, want done", r)
	}
}

func TestConformance(t *testing.T) {
	envtest.Run(t, func(t *testing.T) envs.Env { return newTestEnv(t, nil) }, "echo hi", envtest.WithBlocking("block"))
}

// TestFailureIsShownAsIs: a *envs.Failure is the whole response, without the
// "Error: " prefix, for recovery help that reads as a message of its own.
func TestFailureIsShownAsIs(t *testing.T) {
	d, err := envs.NewDeclarative("t", nil, envs.DeclarativeSpec{
		Description: "Test.",
		Commands: []envs.Command{{Signature: "go", Description: "Go.", Handler: func(context.Context, string) (string, error) {
			return "", envs.Fail("Cannot go - %d steps missing\n\nDo this first.", 2)
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Execute(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	want := envs.Response{Output: "Cannot go - 2 steps missing\n\nDo this first."}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

// Events a tool's handler dispatches in these tests.
type (
	noted struct{ Text string }
	other struct{ N int }
)

var notes = session.NewSlice[[]string]("test.notes", nil)

// notesSession is a session whose notes slice collects noted and other
// events, both named for the log, with one event already logged.
func notesSession(t *testing.T) *session.Session {
	t.Helper()
	sess := session.New()
	for _, err := range []error{
		session.On(sess, notes, func(v []string, e noted) []string { return append(v[:len(v):len(v)], e.Text) }),
		session.On(sess, notes, func(v []string, e other) []string { return append(v[:len(v):len(v)], fmt.Sprint("other ", e.N)) }),
		session.RegisterEvent[noted](sess, "test.noted"),
		session.RegisterEvent[other](sess, "test.other"),
		sess.Dispatch(noted{Text: "before"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return sess
}

func writeLog(t *testing.T, sess *session.Session) string {
	t.Helper()
	var b bytes.Buffer
	if err := sess.WriteLog(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFailedCallChangesNothing: a handler that dispatches events and then
// fails leaves the session's state and log as they were, but for the one
// event recording the failure; the log can still be written and replayed.
func TestFailedCallChangesNothing(t *testing.T) {
	cases := []struct {
		name     string
		fail     func() (string, error)
		message  string
		panicked bool
	}{
		{"error", func() (string, error) { return "", errors.New("the disk is full") }, "the disk is full", false},
		{"error with output", func() (string, error) { return "partial", errors.New("half done") }, "half done", false},
		{"panic", func() (string, error) { panic("kaboom") }, "Tool work panicked: kaboom", true},
		{"runtime panic", func() (string, error) {
			var m map[string]int
			m["x"]++
			return "", nil
		}, "Tool work panicked: assignment to entry in nil map", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sess := notesSession(t)
			before, beforeLog := sess.Snapshot(), writeLog(t, sess)
			var seen []string // what the handler read after its dispatches
			tool := tools.MustNew("work", "Does work.", func(_ context.Context, tc tools.Context, _ struct{}) (string, error) {
				for _, e := range []any{noted{Text: "one"}, other{N: 2}, noted{Text: "three"}} {
					if err := tc.Session.Dispatch(e); err != nil {
						return "", err
					}
				}
				seen = session.Get(tc.Session, notes)
				return c.fail()
			})
			res, err := tool.Call(context.Background(), tools.Context{Session: sess}, nil)
			if err != nil || res.Success || res.Message != c.message {
				t.Fatalf("got %+v, %v; want a failed result %q and no error", res, err, c.message)
			}
			if want := []string{"before", "one", "other 2", "three"}; !reflect.DeepEqual(seen, want) {
				t.Errorf("the handler read %v, want its own events: %v", seen, want)
			}
			if got := sess.Snapshot(); !reflect.DeepEqual(got.Slices(), before.Slices()) || !reflect.DeepEqual(session.Get(sess, notes), []string{"before"}) {
				t.Errorf("state after the failed call: notes %v, want [before]", session.Get(sess, notes))
			}
			log := writeLog(t, sess)
			rest, ok := strings.CutPrefix(log, beforeLog)
			if !ok {
				t.Fatalf("log after the failed call:\n%s\nwant it to start with the log before:\n%s", log, beforeLog)
			}
			events := sess.Events()
			if len(events) != 2 || strings.Count(rest, "\n") != 1 {
				t.Fatalf("got %d events (new lines %q), want the one before and the failure", len(events), rest)
			}
			want := tools.CallFailed{Tool: "work", Message: c.message, Panicked: c.panicked, Discarded: []string{"test.noted", "test.other", "test.noted"}}
			if rec := events[1]; rec.Type != tools.EventCallFailed || !reflect.DeepEqual(rec.Event, want) {
				t.Errorf("got record %s %+v, want %s %+v", rec.Type, rec.Event, tools.EventCallFailed, want)
			}
			// The log, failure record included, replays.
			fresh := notesSession(t)
			if err := tools.RegisterEvents(fresh); err != nil {
				t.Fatal(err)
			}
			replay := strings.SplitAfterN(log, "\n", 2)[1] // fresh has the first event already
			if err := fresh.ReplayLog(strings.NewReader(replay)); err != nil {
				t.Errorf("replaying the log: %v", err)
			}
		})
	}
}

// TestFailedCallKeepsOthersEvents: an event another goroutine dispatches
// to the session while a call is running stays when the call fails, in
// its place in the log.
func TestFailedCallKeepsOthersEvents(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			sess := notesSession(t)
			tool := tools.MustNew("work", "Does work.", func(_ context.Context, tc tools.Context, _ struct{}) (string, error) {
				if err := tc.Session.Dispatch(noted{Text: "mine"}); err != nil {
					return "", err
				}
				done := make(chan error)
				go func() { done <- sess.Dispatch(other{N: 7}) }()
				if err := <-done; err != nil {
					return "", err
				}
				if got := session.Get(tc.Session, notes); !reflect.DeepEqual(got, []string{"before", "other 7", "mine"}) {
					return "", fmt.Errorf("the handler read %v", got)
				}
				if mode == "panic" {
					panic("kaboom")
				}
				return "", errors.New("failed")
			})
			res, err := tool.Call(context.Background(), tools.Context{Session: sess}, nil)
			if err != nil || res.Success {
				t.Fatalf("got %+v, %v; want a failed result", res, err)
			}
			if got := session.Get(sess, notes); !reflect.DeepEqual(got, []string{"before", "other 7"}) {
				t.Errorf("notes: got %v, want [before other 7]", got)
			}
			var types []string
			for _, r := range sess.Events() {
				types = append(types, r.Type)
			}
			if want := "test.noted test.other " + tools.EventCallFailed; strings.Join(types, " ") != want {
				t.Errorf("log: %v, want %s", types, want)
			}
		})
	}
}

// TestSucceededCallCommits: a call that succeeds keeps its events, after
// those dispatched by others while it ran.
func TestSucceededCallCommits(t *testing.T) {
	sess := notesSession(t)
	tool := tools.MustNew("work", "Does work.", func(_ context.Context, tc tools.Context, _ struct{}) (string, error) {
		_ = tc.Session.Dispatch(noted{Text: "mine"})
		_ = sess.Dispatch(other{N: 1})
		return "done", nil
	})
	res, err := tool.Call(context.Background(), tools.Context{Session: sess}, nil)
	if err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	if got := session.Get(sess, notes); !reflect.DeepEqual(got, []string{"before", "other 1", "mine"}) {
		t.Errorf("notes: got %v, want [before other 1 mine]", got)
	}
	if n := len(sess.Events()); n != 3 {
		t.Errorf("%d events, want 3", n)
	}
}

// TestFailedCallRecords: which failures are recorded, and how.
func TestFailedCallRecords(t *testing.T) {
	tool := tools.MustNew("work", "Does work.", func(_ context.Context, tc tools.Context, in struct {
		Mode string `json:"mode"`
	}) (string, error) {
		_ = tc.Session.Dispatch(noted{Text: "mine"})
		switch in.Mode {
		case "halt":
			return "", tools.Halt(errors.New("the store went away"))
		case "long":
			return "", errors.New(strings.Repeat("é", 3000))
		}
		return "ok", nil
	})
	t.Run("invalid arguments", func(t *testing.T) {
		sess := notesSession(t)
		res, _ := tool.Call(context.Background(), tools.Context{Session: sess}, []byte(`{"mode":1}`))
		if res.Success || len(sess.Events()) != 1 {
			t.Errorf("got %+v and %d events; want a failure and nothing recorded: the handler never ran", res, len(sess.Events()))
		}
	})
	t.Run("halt", func(t *testing.T) {
		sess := notesSession(t)
		_, err := tool.Call(context.Background(), tools.Context{Session: sess}, []byte(`{"mode":"halt"}`))
		if !tools.IsHalt(err) {
			t.Fatalf("got %v, want the halt", err)
		}
		if n := len(sess.Events()); n != 1 || len(session.Get(sess, notes)) != 1 {
			t.Errorf("got %d events, notes %v; want the halted call's event discarded and nothing recorded", n, session.Get(sess, notes))
		}
	})
	t.Run("long message", func(t *testing.T) {
		sess := notesSession(t)
		res, _ := tool.Call(context.Background(), tools.Context{Session: sess}, []byte(`{"mode":"long"}`))
		ev := sess.Events()[1].Event.(tools.CallFailed)
		if len(res.Message) != 6000 {
			t.Errorf("the model's message has %d bytes, want all 6000", len(res.Message))
		}
		body, note, ok := strings.Cut(ev.Message, "\n[... ")
		if !ok || len(body) > 4096 || !strings.HasPrefix(res.Message, body) || note != fmt.Sprintf("%d more bytes]", 6000-len(body)) {
			t.Errorf("recorded message: %d bytes of body, note %q; want at most 4096 bytes cut at a character and a note", len(body), note)
		}
	})
	t.Run("unregistered session", func(t *testing.T) {
		// A session that never heard of the event can still write its log.
		sess := session.New()
		if _, err := tool.Call(context.Background(), tools.Context{Session: sess}, []byte(`{"mode":"long"}`)); err != nil {
			t.Fatal(err)
		}
		if err := sess.WriteLog(&bytes.Buffer{}); err != nil {
			t.Errorf("write log: %v", err)
		}
	})

}

// TestConcurrentCallsOneSession runs calls that succeed and calls that
// fail on one session at once, as an MCP server does; run it with -race.
// What stays is exactly the succeeded calls' events and one record per
// failed call.
func TestConcurrentCallsOneSession(t *testing.T) {
	const calls = 40
	sess := notesSession(t)
	tool := tools.MustNew("work", "Does work.", func(_ context.Context, tc tools.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		for range 3 {
			if err := tc.Session.Dispatch(other{N: in.N}); err != nil {
				return "", err
			}
		}
		if got := session.Get(tc.Session, notes); len(got) < 4 {
			return "", fmt.Errorf("the handler read %d notes, want its own 3 and the first", len(got))
		}
		if in.N%2 == 1 {
			return "", errors.New("odd")
		}
		return "even", nil
	})
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			res, err := tool.Call(context.Background(), tools.Context{Session: sess}, fmt.Appendf(nil, `{"n":%d}`, i))
			if err != nil || res.Success != (i%2 == 0) {
				t.Errorf("call %d: got %+v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
	count := map[string]int{}
	for _, note := range session.Get(sess, notes)[1:] {
		count[note]++
	}
	for i := range calls {
		want := 0
		if i%2 == 0 {
			want = 3
		}
		if got := count[fmt.Sprint("other ", i)]; got != want {
			t.Errorf("call %d left %d events, want %d", i, got, want)
		}
	}
	failures := 0
	for _, r := range sess.Events() {
		if _, ok := r.Event.(tools.CallFailed); ok {
			failures++
		}
	}
	if failures != calls/2 {
		t.Errorf("%d failures recorded, want %d", failures, calls/2)
	}
}

// TestNestedCalls: a call made inside a handler, with the handler's
// context, commits into the outer call: its events stay when the outer
// call succeeds and go with it when it fails; a failed inner call is
// recorded in the outer one.
func TestNestedCalls(t *testing.T) {
	inner := tools.MustNew("inner", "Inner work.", func(_ context.Context, tc tools.Context, in struct {
		Fail bool `json:"fail"`
	}) (string, error) {
		_ = tc.Session.Dispatch(noted{Text: "inner"})
		if in.Fail {
			return "", errors.New("inner failed")
		}
		return "ok", nil
	})
	for _, c := range []struct {
		name                   string
		innerFails, outerFails bool
		want                   []string // notes after the outer call
		records                []string // the tools whose failures are recorded
	}{
		{"both succeed", false, false, []string{"before", "outer", "inner"}, nil},
		{"inner fails", true, false, []string{"before", "outer"}, []string{"inner"}},
		{"outer fails", false, true, []string{"before"}, []string{"outer"}},
		{"both fail", true, true, []string{"before"}, []string{"outer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sess := notesSession(t)
			outer := tools.MustNew("outer", "Outer work.", func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
				_ = tc.Session.Dispatch(noted{Text: "outer"})
				if _, err := inner.Call(ctx, tc, fmt.Appendf(nil, `{"fail":%v}`, c.innerFails)); err != nil {
					return "", err
				}
				if c.outerFails {
					return "", errors.New("outer failed")
				}
				return "ok", nil
			})
			if _, err := outer.Call(context.Background(), tools.Context{Session: sess}, nil); err != nil {
				t.Fatal(err)
			}
			if got := session.Get(sess, notes); !reflect.DeepEqual(got, c.want) {
				t.Errorf("notes: got %v, want %v", got, c.want)
			}
			var records []string
			for _, r := range sess.Events() {
				if f, ok := r.Event.(tools.CallFailed); ok {
					records = append(records, f.Tool)
				}
			}
			if !reflect.DeepEqual(records, c.records) {
				t.Errorf("failures recorded: got %v, want %v", records, c.records)
			}
		})
	}
}

// TestLeftBehindGoroutine: a goroutine a handler starts and leaves running
// cannot write to the session once the call ended: its dispatch is
// refused, and the session keeps only what the call committed.
func TestLeftBehindGoroutine(t *testing.T) {
	sess := notesSession(t)
	late := make(chan error)
	release := make(chan struct{})
	tool := tools.MustNew("work", "Does work.", func(_ context.Context, tc tools.Context, _ struct{}) (string, error) {
		view := tc.Session
		go func() {
			<-release
			late <- view.Dispatch(noted{Text: "late"})
		}()
		return "done", view.Dispatch(noted{Text: "mine"})
	})
	if res, err := tool.Call(context.Background(), tools.Context{Session: sess}, nil); err != nil || !res.Success {
		t.Fatalf("got %+v, %v", res, err)
	}
	close(release)
	if err := <-late; !errors.Is(err, session.ErrEnded) {
		t.Errorf("the late dispatch: got %v, want session.ErrEnded", err)
	}
	if got := session.Get(sess, notes); !reflect.DeepEqual(got, []string{"before", "mine"}) {
		t.Errorf("notes: got %v, want [before mine]", got)
	}
}

// TestFailedRawCallChangesNothing: a tool made with NewRaw, whose handler
// reports a failed result or panics, changes nothing in the session but
// for the record of the failure.
func TestFailedRawCallChangesNothing(t *testing.T) {
	for _, mode := range []string{"failed result", "error", "panic", "success"} {
		t.Run(mode, func(t *testing.T) {
			sess := notesSession(t)
			tool, err := tools.NewRaw("proxy", "Calls elsewhere.", []byte(`{"type":"object"}`), nil,
				func(_ context.Context, tc tools.Context, _ json.RawMessage) (tools.Result, error) {
					_ = tc.Session.Dispatch(noted{Text: "proxied"})
					switch mode {
					case "failed result":
						return tools.Result{Message: "the server said no"}, nil
					case "error":
						return tools.Result{}, errors.New("the server went away")
					case "panic":
						panic("kaboom")
					}
					return tools.Result{Message: "ok", Success: true}, nil
				})
			if err != nil {
				t.Fatal(err)
			}
			// A raw handler's error is the program's, as it returned it.
			if _, err := tool.Call(context.Background(), tools.Context{Session: sess}, nil); (err != nil) != (mode == "error") {
				t.Fatalf("got error %v", err)
			}
			want, records := []string{"before"}, 1
			if mode == "success" {
				want, records = []string{"before", "proxied"}, 0
			}
			if got := session.Get(sess, notes); !reflect.DeepEqual(got, want) {
				t.Errorf("notes: got %v, want %v", got, want)
			}
			n := 0
			for _, r := range sess.Events() {
				if f, ok := r.Event.(tools.CallFailed); ok && f.Tool == "proxy" && f.Panicked == (mode == "panic") {
					n++
				}
			}
			if n != records {
				t.Errorf("%d failures recorded, want %d", n, records)
			}
		})
	}
}

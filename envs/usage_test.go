package envs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/session"
)

func newTimerEnv(t *testing.T, sess *session.Session) *envs.Declarative {
	t.Helper()
	d, err := envs.NewDeclarative("timer", sess, envs.DeclarativeSpec{
		Description: "Timer for tracking elapsed time",
		Commands:    timerCommands(),
		State:       func() string { return stopped },
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func screenOf(t *testing.T, d *envs.Declarative) string {
	t.Helper()
	s, err := d.Screen()
	if err != nil {
		t.Fatal(err)
	}
	return s.Content
}

func run(t *testing.T, d *envs.Declarative, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if r, err := d.Execute(context.Background(), c); err != nil || !r.Success {
			t.Fatalf("Execute(%q) = %+v, %v", c, r, err)
		}
	}
}

func TestRestoreSnapshot(t *testing.T) {
	sess := session.New()
	d := newTimerEnv(t, sess)
	unused := screenOf(t, d)
	run(t, d, "start")
	afterStart := screenOf(t, d)
	snap := sess.Snapshot()
	run(t, d, "stop", "reset")
	if got := screenOf(t, d); got == afterStart {
		t.Fatalf("screen did not change after stop and reset:\n%s", got)
	}

	t.Run("same session", func(t *testing.T) {
		if err := sess.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if got := screenOf(t, d); got != afterStart {
			t.Errorf("got screen\n%s\nwant\n%s", got, afterStart)
		}
	})
	t.Run("fresh session from JSON", func(t *testing.T) {
		data, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		fresh := session.New()
		d2 := newTimerEnv(t, fresh)
		if got := screenOf(t, d2); got != unused {
			t.Fatalf("fresh environment: got screen\n%s\nwant\n%s", got, unused)
		}
		decoded, err := fresh.DecodeSnapshot(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.Restore(decoded); err != nil {
			t.Fatal(err)
		}
		if got := screenOf(t, d2); got != afterStart {
			t.Errorf("got screen\n%s\nwant\n%s", got, afterStart)
		}
	})
	t.Run("empty snapshot", func(t *testing.T) {
		if err := sess.Restore(session.New().Snapshot()); err != nil {
			t.Fatal(err)
		}
		if got := screenOf(t, d); got != unused {
			t.Errorf("got screen\n%s\nwant\n%s", got, unused)
		}
	})
}

func TestReplayLog(t *testing.T) {
	sess := session.New()
	d := newTimerEnv(t, sess)
	run(t, d, "stop", "start", "stop")
	want := screenOf(t, d)
	var log bytes.Buffer
	if err := sess.WriteLog(&log); err != nil {
		t.Fatal(err)
	}
	fresh := session.New()
	if err := envs.RegisterUsage(fresh); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ReplayLog(&log); err != nil {
		t.Fatal(err)
	}
	if got := screenOf(t, newTimerEnv(t, fresh)); got != want {
		t.Errorf("got screen\n%s\nwant\n%s", got, want)
	}
}

func TestUsageSharedSession(t *testing.T) {
	sess := session.New()
	a := newTimerEnv(t, sess)
	b, err := envs.NewDeclarative("stopwatch", sess, envs.DeclarativeSpec{Description: "Stopwatch", Commands: timerCommands()})
	if err != nil {
		t.Fatal(err)
	}
	if err := envs.RegisterUsage(sess); err != nil { // again: no second reducer
		t.Fatal(err)
	}
	run(t, a, "start")
	run(t, b, "reset", "stop")
	u := envs.GetUsage(sess)
	tests := []struct {
		env  string
		want string
	}{
		{"timer", "[start]"},
		{"stopwatch", "[reset stop]"},
		{"other", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			if got := fmt.Sprint(u.Commands(tt.env)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	if got, want := fmt.Sprint(u.Environments()), "[stopwatch timer]"; got != want {
		t.Errorf("got environments %s, want %s", got, want)
	}
	data, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), `{"stopwatch":{"commands":["reset","stop"]},"timer":{"commands":["start"]}}`; got != want {
		t.Errorf("got JSON %s, want %s", got, want)
	}
}

func TestUsageJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", `{}`, `{}`},
		{"sorted", `{"e":{"commands":["b","a"]}}`, `{"e":{"commands":["a","b"]}}`},
		{"duplicates", `{"e":{"commands":["a","a","b"]}}`, `{"e":{"commands":["a","b"]}}`},
		{"runs", `{"e":{"runs":3},"f":{"runs":1,"commands":["x"]}}`, `{"e":{"runs":3},"f":{"runs":1,"commands":["x"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u envs.Usage
			if err := json.Unmarshal([]byte(tt.in), &u); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	var zero envs.Usage
	if got, _ := json.Marshal(zero); string(got) != "{}" {
		t.Errorf("zero Usage: got %s, want {}", got)
	}
	if err := json.Unmarshal([]byte(`[1]`), &zero); err == nil {
		t.Error("got no error for a JSON array, want one")
	}
}

func TestUsageRan(t *testing.T) {
	u0 := envs.Usage{}
	u1 := u0.Ran("b").Ran("a").Ran("b").With("a", "x")
	if u0.Count("b") != 0 || u1.Count("b") != 2 || u1.Count("a") != 1 || !u1.Used("a", "x") {
		t.Errorf("got %d, %d, %d, %v; want 0, 2, 1, true", u0.Count("b"), u1.Count("b"), u1.Count("a"), u1.Used("a", "x"))
	}
	if got := fmt.Sprint(u1.Environments()); got != "[a b]" {
		t.Errorf("environments: got %s, want [a b]", got)
	}
}

func TestUsageWithIsImmutable(t *testing.T) {
	u0 := envs.Usage{}
	u1 := u0.With("e", "b")
	u2 := u1.With("e", "a")
	u3 := u2.With("e", "a")
	tests := []struct {
		name string
		u    envs.Usage
		want string
	}{
		{"zero", u0, "[]"},
		{"one", u1, "[b]"},
		{"two", u2, "[a b]"},
		{"repeat", u3, "[a b]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprint(tt.u.Commands("e")); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

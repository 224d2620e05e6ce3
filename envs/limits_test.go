package envs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/envs"
)

func TestClipQuestion(t *testing.T) {
	tail := strings.Repeat("x", envs.MaxQuestion-1) + "?"
	for _, c := range []struct{ name, in, want string }{
		{"short", "Your name? ", "Your name? "},
		{"empty", "", ""},
		{"exactly the limit", tail, tail},
		{"long", strings.Repeat("Q", 2000000) + tail, "…" + tail},
		{"multi-byte", strings.Repeat("é", 1000) + "?", "…" + strings.Repeat("é", envs.MaxQuestion-1) + "?"},
		{"short in characters, long in bytes", strings.Repeat("é", envs.MaxQuestion), strings.Repeat("é", envs.MaxQuestion)},
		{"a character cut in two", "\xa9" + strings.Repeat("é", envs.MaxQuestion), "…" + strings.Repeat("é", envs.MaxQuestion)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := envs.ClipQuestion(c.in)
			if got != c.want {
				t.Errorf("got %d bytes %.30q..., want %d bytes %.30q...", len(got), got, len(c.want), c.want)
			}
			if again := envs.ClipQuestion(got); again != got {
				t.Errorf("clipped twice: got %.30q..., want it unchanged", again)
			}
			if utf8.ValidString(c.in) && !utf8.ValidString(got) {
				t.Errorf("got invalid UTF-8 %q", got)
			}
		})
	}
}

func TestWaitingNoteClipsQuestion(t *testing.T) {
	note := envs.WaitingNote(strings.Repeat("Q", 1<<20)+"?", false)
	if len(note) > 2*envs.MaxQuestion+400 || !strings.Contains(note, `"…QQ`) {
		t.Errorf("got a note of %d bytes, want the question clipped to its last %d characters", len(note), envs.MaxQuestion)
	}
}

// TestLimitsCeiling checks that the spec's hard timeout bounds the call's
// deadline, that the call's own limit may only shorten it, and that the
// cause names the spec only when the spec's timeout is the one that ends
// the call. The start lies in the past, so every deadline has passed and
// the cause is there to read without waiting.
func TestLimitsCeiling(t *testing.T) {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	errSpec := errors.New("the spec's timeout passed")
	for _, tc := range []struct {
		name      string
		until     time.Time
		hard      time.Duration
		deadline  time.Time // zero: none
		cause     error
		keepUntil bool
	}{
		{name: "no limit of the call", hard: time.Minute, deadline: start.Add(time.Minute), cause: errSpec},
		{name: "call's limit sooner", until: start.Add(time.Second), hard: time.Minute, deadline: start.Add(time.Second), cause: context.DeadlineExceeded},
		{name: "call's limit later", until: start.Add(time.Hour), hard: time.Minute, deadline: start.Add(time.Minute), cause: errSpec},
		{name: "same time", until: start.Add(time.Minute), hard: time.Minute, deadline: start.Add(time.Minute), cause: errSpec},
		{name: "no hard timeout", until: start.Add(time.Hour), keepUntil: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, l, cancel := envs.Limits{Until: tc.until, Budget: 7}.Ceiling(context.Background(), start, tc.hard, errSpec)
			defer cancel()
			deadline, ok := ctx.Deadline()
			if !deadline.Equal(tc.deadline) || ok == tc.deadline.IsZero() {
				t.Errorf("deadline %v (%v), want %v", deadline, ok, tc.deadline)
			}
			if tc.deadline.IsZero() {
				if ctx.Err() != nil {
					t.Errorf("context done without a deadline: %v", ctx.Err())
				}
			} else if got := context.Cause(ctx); got != tc.cause {
				t.Errorf("cause %v, want %v", got, tc.cause)
			}
			var want time.Time
			if tc.keepUntil {
				want = tc.until
			}
			if !l.Until.Equal(want) {
				t.Errorf("Until %v, want %v", l.Until, want)
			}
			if l.Budget != 7 {
				t.Errorf("Budget %d, want the call's 7", l.Budget)
			}
		})
	}
}

package envs_test

import (
	"strings"
	"testing"
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

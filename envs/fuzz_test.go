package envs_test

import (
	"context"
	"strings"
	"testing"
)

// FuzzExecute checks that routing never panics, that a handler receives a
// piece of the command text, and that responses stay bounded.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{"", " ", "echo hi", "quote a\nb\n", "\n\techo \t x ", "nope", "\xff", "boom", "fail x"} {
		f.Add(s)
	}
	d := newTestEnv(f, nil)
	f.Fuzz(func(t *testing.T, text string) {
		if fields := strings.Fields(text); len(fields) > 0 && fields[0] == "block" {
			return // waits for a cancel that never comes
		}
		r, err := d.Execute(context.Background(), text)
		if err != nil {
			t.Fatalf("Execute(%q): got error %v, want a response", text, err)
		}
		// quote's %q writes up to 4 bytes for each byte of the text
		// (\x01); the environment adds no more than the command list and
		// a line of its own.
		if len(r.Output) > 4*len(text)+len(available)+200 {
			t.Errorf("Execute(%q): got %d bytes of output, want it bounded", text, len(r.Output))
		}
		if fields := strings.Fields(text); len(fields) > 0 && fields[0] == "echo" {
			if !r.Success || !strings.Contains(text, r.Output) {
				t.Errorf("Execute(%q): got %+v, want success with a piece of the text", text, r)
			}
		}
	})
}

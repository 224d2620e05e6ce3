package openai

import (
	"strings"
	"testing"
)

// TestBadCustomHeaders refuses a client whose environment names a header
// no request could carry, saying where it is, instead of failing every
// request as a network error.
func TestBadCustomHeaders(t *testing.T) {
	t.Setenv("OPENAI_CUSTOM_HEADERS", "Bad Name: x")
	for _, err := range []error{
		func() error { _, err := New("http://127.0.0.1:9/v1", "m"); return err }(),
		func() error { _, err := NewResponses("http://127.0.0.1:9/v1", "m"); return err }(),
	} {
		if want := `openai: new: OPENAI_CUSTOM_HEADERS, line 1: "Bad Name: x" is not a header`; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

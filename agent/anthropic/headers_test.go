package anthropic

import (
	"strings"
	"testing"
)

// TestBadCustomHeaders refuses a client whose environment names a header
// no request could carry, saying where it is, instead of failing every
// request as a network error.
func TestBadCustomHeaders(t *testing.T) {
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: blue\n:x")
	_, err := New("http://127.0.0.1:9", "claude-sonnet-4-5", WithAPIKey("k"))
	if want := `anthropic: new: ANTHROPIC_CUSTOM_HEADERS, line 2: ":x" is not a header`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    commandMessage
		wantMsg string
	}{
		{"command", `{"type":"command","environment":"bash","command":"ls -la"}`, commandMessage{Environment: "bash", Command: "ls -la"}, ""},
		{"field order free", `{"command":"x","environment":"e","type":"command"}`, commandMessage{Environment: "e", Command: "x"}, ""},
		{"whitespace around", " \t{\"type\":\"command\",\"environment\":\"e\",\"command\":\"\"} ", commandMessage{Environment: "e"}, ""},
		{"timeout", `{"type":"command","environment":"e","command":"x","timeout":1.5}`, commandMessage{Environment: "e", Command: "x", Timeout: 1500 * time.Millisecond}, ""},
		{"tiny timeout", `{"type":"command","environment":"e","command":"x","timeout":1e-12}`, commandMessage{Environment: "e", Command: "x", Timeout: 1}, ""},
		{"escapes", `{"type":"command","environment":"e","command":"a\nb\u00e9"}`, commandMessage{Environment: "e", Command: "a\nbé"}, ""},
		{"unknown fields, many", `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1}`, commandMessage{}, `Failed to parse command: unknown fields "a", "b", "c", "d", "e", and 2 more; a command has "type", "environment", "command" and optionally "id", "timeout", "hard", "quiet" and "budget"`},
		{"long type is clipped", `{"type":"` + strings.Repeat("t", 100) + `"}`, commandMessage{}, `Failed to parse command: unknown message type "` + strings.Repeat("t", 64) + `..."; the only type is "command"`},
		{"type checked before missing fields", `{"type":"ping"}`, commandMessage{}, `Failed to parse command: unknown message type "ping"; the only type is "command"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := decodeMessage([]byte(tt.line))
			if got != tt.want || msg != tt.wantMsg {
				t.Errorf("got (%+v, %q), want (%+v, %q)", got, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

// FuzzDecodeMessage checks that the decoder never panics, that it either
// decodes a command or explains the problem, and that a decoded command
// encodes back to a line that decodes to the same command.
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		`{"type":"command","environment":"bash","command":"ls -la"}`,
		`{"type":"command","environment":"e","command":"x","timeout":2}`,
		`{"type":"command","environment":"e","command":"x","timeout":"2"}`,
		`{"type":"command","environment":"e"}`,
		`{"type":"ping"}`,
		`{}`, `[]`, `null`, `"x"`, `1`, `true`, ``, ` `, `{`, `}`,
		"{\"type\":\"command\",\"environment\":\"e\",\"command\":\"\xff\"}",
		`{"type":"command","environment":"e","command":"\ud800"}`,
		`{"type":"command","type":"command","environment":"e","command":"x"}`,
		`{"type":"command","environment":"e","command":"x","extra":{"nested":[1,2,{}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, msg := decodeMessage(line)
		if msg != "" {
			if m != (commandMessage{}) {
				t.Errorf("got command %+v with message %q, want one or the other", m, msg)
			}
			if !strings.HasPrefix(msg, parsePrefix) {
				t.Errorf("got message %q, want the %q prefix", msg, parsePrefix)
			}
			if !utf8.ValidString(msg) {
				t.Errorf("got message %q, want valid UTF-8", msg)
			}
			return
		}
		if !utf8.Valid(line) {
			t.Errorf("decoded %+v from invalid UTF-8 %q", m, line)
		}
		if m.Timeout < 0 || m.Timeout > MaxTimeout*time.Second {
			t.Errorf("got timeout %v, want within (0, %ds]", m.Timeout, MaxTimeout)
		}
		again, err := json.Marshal(map[string]any{"type": "command", "environment": m.Environment, "command": m.Command})
		if err != nil {
			t.Fatal(err)
		}
		m2, msg2 := decodeMessage(again)
		m.Timeout = 0
		if msg2 != "" || m2 != m {
			t.Errorf("re-encoded %s: got (%+v, %q), want %+v", again, m2, msg2, m)
		}
	})
}

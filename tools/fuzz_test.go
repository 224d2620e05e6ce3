package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/tools"
)

// fuzzIn has a field of most kinds. Fields that could encode as null are
// optional, so any value Call decodes encodes back to valid arguments.
type fuzzIn struct {
	Name  string          `json:"name"`
	Count int8            `json:"count"`
	Size  uint16          `json:"size,omitempty"`
	Ratio float64         `json:"ratio,omitempty"`
	Flag  bool            `json:"flag,omitempty"`
	Mode  string          `json:"mode,omitempty" enum:"fast,slow"`
	Keys  []string        `json:"keys,omitempty"`
	Meta  map[string]int  `json:"meta,omitempty"`
	At    time.Time       `json:"at,omitzero"`
	Blob  []byte          `json:"blob,omitempty"`
	Any   any             `json:"any,omitempty"`
	Raw   json.RawMessage `json:"raw,omitempty"`
	Sub   *struct {
		Deep []map[string]bool `json:"deep,omitempty"`
	} `json:"sub,omitempty"`
}

// FuzzCall checks that no argument text makes Call fail as a program: every
// outcome is a result, failures explain themselves within a bounded message,
// and whatever is accepted survives a round trip.
func FuzzCall(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `{"name":"a","count":1}`, `{"name":1}`, `[]`, `{"name":"a","count":1,"x":2}`,
		`{"name":"a","count":-129}`, `{"name":"a","count":1,"sub":{"deep":[{"a":true}]}}`,
	} {
		f.Add([]byte(seed))
	}
	var got fuzzIn
	tool := tools.MustNew("fuzz", "Fuzz target.", func(ctx context.Context, tc tools.Context, in fuzzIn) (string, error) {
		got = in
		return "ok", nil
	})
	f.Fuzz(func(t *testing.T, args []byte) {
		got = fuzzIn{}
		res, err := tool.Call(context.Background(), tools.Context{}, args)
		if err != nil {
			t.Fatalf("got error %v, want nil", err)
		}
		if !res.Success {
			if !strings.HasPrefix(res.Message, "Invalid arguments: ") {
				t.Fatalf("got failure message %q, want it to start with %q", res.Message, "Invalid arguments: ")
			}
			if len(res.Message) > 2000 {
				t.Fatalf("got a %d-byte message, want at most 2000 bytes", len(res.Message))
			}
			return
		}
		if res.Message != "ok" {
			t.Fatalf("got message %q, want %q", res.Message, "ok")
		}
		if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !json.Valid(trimmed) {
			t.Fatalf("accepted arguments that are not JSON: %q", args)
		}
		first, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("encoding the decoded input: %v", err)
		}
		res, err = tool.Call(context.Background(), tools.Context{}, first)
		if err != nil || !res.Success {
			t.Fatalf("round trip of %s: got %+v, %v, want success", first, res, err)
		}
		second, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("encoding the decoded input again: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("round trip changed the input: got %s, want %s", second, first)
		}
	})
}

// FuzzShellCheck checks that no command text makes the shell policy fail
// as a program: every outcome is nil, a *BlockedError, or the empty
// command's error; eval, sh -c and wrappers nested without end are cut off.
func FuzzShellCheck(f *testing.F) {
	for _, b := range bypasses {
		f.Add(b.command, b.shell == "bash")
	}
	for _, seed := range []string{"", "ls -la", "eval eval eval eval eval eval eval eval eval eval 'rm x'",
		"sh -c \"sh -c 'sh -c \\\"ls\\\"'\"", "x=1; echo $((x+1))", "find . -exec", "env -u", "xargs -I", "a[", "$((", "`"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, command string, bash bool) {
		p := tools.ShellPolicy{Dir: dir}
		if bash {
			p.Shell = "bash"
		}
		err := p.Check(command)
		var be *tools.BlockedError
		if err != nil && !errors.As(err, &be) && strings.TrimSpace(command) != "" {
			t.Fatalf("Check(%q): got %T %v, want nil or a *BlockedError", command, err, err)
		}
		if be != nil && (be.Rule == "" || be.Reason == "") {
			t.Fatalf("Check(%q): a refusal without a rule or a reason: %+v", command, be)
		}
	})
}

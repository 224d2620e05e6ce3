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
	"time"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
)

type callIn struct {
	SectionKeys []string  `json:"section_keys" description:"keys to open"`
	Reason      string    `json:"reason,omitempty"`
	Count       int8      `json:"count,omitempty"`
	Size        uint      `json:"size,omitempty"`
	Mode        string    `json:"mode,omitempty" enum:"fast,slow"`
	At          time.Time `json:"at,omitzero"`
	Opts        *struct {
		Deep bool `json:"deep"`
	} `json:"opts,omitempty"`
	Meta map[string]int `json:"meta,omitempty"`
}

func okTool(t testing.TB) *tools.Tool {
	t.Helper()
	tool, err := tools.New("open_sections", "Open sections.", func(ctx context.Context, tc tools.Context, in callIn) (string, error) {
		return "opened " + strings.Join(in.SectionKeys, ","), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

const allowed = "(allowed: section_keys, reason, count, size, mode, at, opts, meta)"

func TestCallInvalidArguments(t *testing.T) {
	tool := okTool(t)
	tests := []struct {
		name string
		args string
		want string
	}{
		{"not JSON", `not json`, "Invalid arguments: not valid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 2)"},
		{"not JSON word", `hello`, "Invalid arguments: not valid JSON: invalid character 'h' looking for beginning of value (at byte 1)"},
		{"truncated", `{"section_keys":`, "Invalid arguments: not valid JSON: the input ends in the middle of a value"},
		{"trailing data", `{"section_keys":[]} {}`, "Invalid arguments: not valid JSON: unexpected data after the arguments object (at byte 20); send exactly one JSON object"},
		{"array instead of object", `["a"]`, "Invalid arguments: (root): expected object, but got array"},
		{"string instead of object", `"a"`, "Invalid arguments: (root): expected object, but got string"},
		{"number instead of object", `1`, "Invalid arguments: (root): expected object, but got number"},
		{"missing required", `{}`, "Invalid arguments: section_keys: missing required property"},
		{"empty means {}", ``, "Invalid arguments: section_keys: missing required property"},
		{"whitespace means {}", " \n\t ", "Invalid arguments: section_keys: missing required property"},
		{"null means {}", ` null `, "Invalid arguments: section_keys: missing required property"},
		{"param of the wrong type", `{"section_keys":"intro"}`, "Invalid arguments: section_keys: expected array, but got string"},
		{"null param", `{"section_keys":null}`, "Invalid arguments: section_keys: expected array, but got null"},
		{"null pointer", `{"section_keys":[],"opts":null}`, "Invalid arguments: opts: expected object, but got null"},
		{"non-string where string expected", `{"section_keys":[1]}`, "Invalid arguments: section_keys/0: expected string, but got number"},
		{"non-string field", `{"section_keys":[],"reason":true}`, "Invalid arguments: reason: expected string, but got boolean"},
		{"extra field", `{"section_keys":[],"extra":1}`, "Invalid arguments: extra: unknown property " + allowed},
		{"wrong case", `{"Section_Keys":[]}`, "Invalid arguments: Section_Keys: unknown property " + allowed + "; section_keys: missing required property"},
		{"extra fields share the hint", `{"section_keys":[],"b":1,"a":2}`, "Invalid arguments: a: unknown property " + allowed + "; b: unknown property"},
		{"escaped names", `{"section_keys":[],"a/b~c":1}`, "Invalid arguments: a~1b~0c: unknown property " + allowed},
		{"unicode name", `{"section_keys":[],"é x":1}`, "Invalid arguments: é x: unknown property " + allowed},
		{"nested missing", `{"section_keys":[],"opts":{}}`, "Invalid arguments: opts/deep: missing required property"},
		{"nested extra", `{"section_keys":[],"opts":{"deep":true,"wide":1}}`, "Invalid arguments: opts/wide: unknown property (allowed: deep)"},
		{"map value", `{"section_keys":[],"meta":{"a":1,"b":"2"}}`, "Invalid arguments: meta/b: expected integer, but got string"},
		{"enum", `{"section_keys":[],"mode":"medium"}`, `Invalid arguments: mode: value must be one of "fast", "slow"`},
		{"not an integer", `{"section_keys":[],"count":1.5}`, "Invalid arguments: count: expected integer, but got number"},
		{"negative unsigned", `{"section_keys":[],"size":-1}`, "Invalid arguments: size: must be >= 0 but found -1"},
		{"out of range", `{"section_keys":[],"count":1000}`, "Invalid arguments: count: must be <= 127 but found 1000"},
		{"out of range when decoded", `{"section_keys":[],"size":18446744073709551616}`, "Invalid arguments: size: number 18446744073709551616 is out of range (0 to 18446744073709551615)"},
		{"integer written as decimal", `{"section_keys":[],"count":1.0}`, "Invalid arguments: count: number 1.0 must be written as a plain integer, without a fraction or exponent"},
		{"control character in name", "{\"section_keys\":[],\"a\\u0000b\\n\":1}", `Invalid arguments: a\x00b\n: unknown property ` + allowed},
		{"huge exponent", `{"section_keys":[],"count":1e999999999}`, "Invalid arguments: count: number 1e999999999 is out of range for any number type"},
		{"huge exponent in float", `{"section_keys":[],"meta":{"a":-1E-500}}`, "Invalid arguments: meta/a: number -1E-500 is out of range for any number type"},
		{"long number", `{"section_keys":[],"size":` + strings.Repeat("9", 101) + `}`, "Invalid arguments: size: number " + strings.Repeat("9", 40) + " is out of range for any number type"},
		{"indexes in numeric order", `{"section_keys":[1,"a","a","a","a","a","a","a","a","a",2,3]}`,
			"Invalid arguments: section_keys/0: expected string, but got number; section_keys/10: expected string, but got number; section_keys/11: expected string, but got number"},
		{"bad time", `{"section_keys":[],"at":"yesterday"}`, "Invalid arguments: at: 'yesterday' is not valid 'date-time'"},
		{"many problems", `{"section_keys":[1,2],"reason":3,"x":1,"y":2}`,
			"Invalid arguments: reason: expected string, but got number; section_keys/0: expected string, but got number; section_keys/1: expected string, but got number; and 2 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if res.Success || res.Value != nil {
				t.Errorf("got Success %v Value %v, want false and nil", res.Success, res.Value)
			}
			if res.Message != tt.want {
				t.Errorf("got  %q\nwant %q", res.Message, tt.want)
			}
		})
	}
}

func TestCallHugeInput(t *testing.T) {
	tool := okTool(t)
	tests := []struct {
		name string
		args []byte
		want string // prefix of the message
	}{
		{"over the limit", bytes.Repeat([]byte(" "), tools.MaxArgs+1),
			fmt.Sprintf("Invalid arguments: the arguments are %d bytes, more than the limit of %d bytes; send less data", tools.MaxArgs+1, tools.MaxArgs)},
		{"long unknown key", []byte(`{"section_keys":[],"` + strings.Repeat("k", 1<<20) + `":1}`),
			"Invalid arguments: " + strings.Repeat("k", 200) + ": unknown property"},
		{"long bad value", []byte(`{"section_keys":[],"at":"` + strings.Repeat("t", 1<<20) + `"}`),
			"Invalid arguments: at: 'ttt"},
		{"many unknown keys", []byte(`{"section_keys":[]` + strings.Repeat(`,"k":1`, 1) + manyKeys(10000) + `}`),
			"Invalid arguments: k: unknown property"},
		{"long array of wrong items", []byte(`{"section_keys":[` + strings.Repeat(`1,`, 100000) + `1]}`),
			"Invalid arguments: section_keys/0: expected string, but got number; section_keys/1: expected string, but got number; section_keys/2: expected string, but got number; and 99998 more"},
		{"just over the flood limit", []byte(`{"section_keys":[` + strings.Repeat(`1,`, 100) + `1]}`),
			"Invalid arguments: section_keys/0: expected string, but got number; section_keys/1: expected string, but got number; section_keys/2: expected string, but got number; and 98 more"},
		{"many wrong map values", []byte(`{"section_keys":[],"meta":{` + manyKeys(100000)[1:] + `,"z":"x"}}`),
			"Invalid arguments: meta/z: expected integer, but got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(context.Background(), tools.Context{}, tt.args)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if res.Success {
				t.Fatalf("got success, want a failed result")
			}
			if !strings.HasPrefix(res.Message, tt.want) {
				t.Errorf("got message starting %.300q, want it to start with %.300q", res.Message, tt.want)
			}
			if len(res.Message) > 2000 {
				t.Errorf("got a %d-byte message, want at most 2000 bytes", len(res.Message))
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	return b.String()
}

func TestCallDecodes(t *testing.T) {
	var got callIn
	tool := tools.MustNew("capture", "Capture the input.", func(ctx context.Context, tc tools.Context, in callIn) (struct{}, error) {
		got = in
		return struct{}{}, nil
	})
	res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(
		` {"section_keys":["a","b"],"count":-3,"size":7,"mode":"slow","at":"2024-05-06T07:08:09Z","opts":{"deep":true},"meta":{"x":1}} `))
	if err != nil || !res.Success {
		t.Fatalf("got %+v, %v, want success", res, err)
	}
	want := callIn{
		SectionKeys: []string{"a", "b"}, Count: -3, Size: 7, Mode: "slow",
		At: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Meta: map[string]int{"x": 1},
	}
	want.Opts = &struct {
		Deep bool `json:"deep"`
	}{Deep: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

type stringer struct{ n int }

func (s stringer) String() string { return fmt.Sprintf("stringer %d", s.n) }

type label string

type report struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
}

func TestCallSuccessMessage(t *testing.T) {
	tests := []struct {
		name  string
		tool  *tools.Tool
		want  string
		value any
	}{
		{"string", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (string, error) { return "done <ok>", nil }),
			"done <ok>", "done <ok>"},
		{"named string", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (label, error) { return "lbl", nil }),
			"lbl", label("lbl")},
		{"stringer", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (stringer, error) { return stringer{3}, nil }),
			"stringer 3", stringer{3}},
		{"struct as JSON", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (report, error) { return report{"a&b<c>", 2}, nil }),
			`{"path":"a&b<c>","lines":2}`, report{"a&b<c>", 2}},
		{"int", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (int, error) { return 42, nil }),
			"42", 42},
		{"slice", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) ([]string, error) { return []string{"x"}, nil }),
			`["x"]`, []string{"x"}},
		{"nil pointer", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (*report, error) { return nil, nil }),
			"null", (*report)(nil)},
		{"nil any", tools.MustNew("s", "d", func(context.Context, tools.Context, struct{}) (any, error) { return nil, nil }),
			"null", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.tool.Call(context.Background(), tools.Context{}, nil)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if !res.Success {
				t.Fatalf("got failure %q, want success", res.Message)
			}
			if res.Message != tt.want {
				t.Errorf("got message %q, want %q", res.Message, tt.want)
			}
			if g, w := fmt.Sprintf("%#v", res.Value), fmt.Sprintf("%#v", tt.value); g != w {
				t.Errorf("got value %s, want %s", g, w)
			}
		})
	}
}

var errStore = errors.New("store unavailable")

type storeError struct{ Code int }

func (e *storeError) Error() string { return fmt.Sprintf("store error %d", e.Code) }

func TestCallHandlerFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler tools.Handler[struct{}, string]
		want    string
		value   any // the failed result's Value
	}{
		{"error with output", func(context.Context, tools.Context, struct{}) (string, error) {
			return "partial", errors.New("file notes.md does not exist; create it first")
		}, "file notes.md does not exist; create it first", "partial"},
		{"wrapped error", func(context.Context, tools.Context, struct{}) (string, error) {
			return "", fmt.Errorf("reading config: %w", errStore)
		}, "reading config: store unavailable", nil},
		{"error without text", func(context.Context, tools.Context, struct{}) (string, error) {
			return "", errors.New("")
		}, "Tool worker failed.", nil},
		{"panic string", func(context.Context, tools.Context, struct{}) (string, error) {
			panic("boom")
		}, "Tool worker panicked: boom", nil},
		{"panic error", func(context.Context, tools.Context, struct{}) (string, error) {
			panic(errStore)
		}, "Tool worker panicked: store unavailable", nil},
		{"panic runtime", func(context.Context, tools.Context, struct{}) (string, error) {
			var m map[string]int
			m["x"] = 1
			return "", nil
		}, "Tool worker panicked: assignment to entry in nil map", nil},
		{"panic with halt", func(context.Context, tools.Context, struct{}) (string, error) {
			panic(tools.Halt(errStore))
		}, "Tool worker panicked: store unavailable", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := tools.MustNew("worker", "Does work.", tt.handler)
			res, err := tool.Call(context.Background(), tools.Context{}, nil)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if res.Success || res.Value != tt.value {
				t.Errorf("got Success %v Value %#v, want false and %#v", res.Success, res.Value, tt.value)
			}
			if res.Message != tt.want {
				t.Errorf("got message %q, want %q", res.Message, tt.want)
			}
		})
	}
}

func TestCallPanicInStringer(t *testing.T) {
	tool := tools.MustNew("worker", "Does work.", func(context.Context, tools.Context, struct{}) (panicky, error) { return panicky{}, nil })
	res, err := tool.Call(context.Background(), tools.Context{}, nil)
	if err != nil || res.Success || res.Message != "Tool worker panicked: no string" {
		t.Errorf("got %+v, %v, want a failed result saying the tool panicked", res, err)
	}
}

type panicky struct{}

func (panicky) String() string { panic("no string") }

func TestCallUnencodableResult(t *testing.T) {
	tool := tools.MustNew("worker", "Does work.", func(context.Context, tools.Context, struct{}) (any, error) { return make(chan int), nil })
	res, err := tool.Call(context.Background(), tools.Context{}, nil)
	want := "Tool worker produced a result that cannot be encoded as JSON: json: unsupported type: chan int"
	if err != nil || res.Success || res.Message != want {
		t.Errorf("got %+v, %v, want message %q", res, err, want)
	}
}

func TestCallHalt(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantText string
	}{
		{"sentinel", tools.Halt(errStore), "store unavailable"},
		{"wrapped around halt", fmt.Errorf("saving: %w", tools.Halt(errStore)), "saving: store unavailable"},
		{"halt around wrapped", tools.Halt(fmt.Errorf("saving: %w", errStore)), "saving: store unavailable"},
		{"double halt", tools.Halt(tools.Halt(errStore)), "store unavailable"},
		{"typed", tools.Halt(fmt.Errorf("saving: %w", &storeError{Code: 7})), "saving: store error 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := tools.MustNew("worker", "Does work.", func(context.Context, tools.Context, struct{}) (string, error) { return "", tt.err })
			res, err := tool.Call(context.Background(), tools.Context{}, nil)
			if err == nil {
				t.Fatalf("got nil error and %+v, want the halt error", res)
			}
			if err != tt.err {
				t.Errorf("got error %#v, want the handler's error unchanged", err)
			}
			if got := err.Error(); got != tt.wantText {
				t.Errorf("got error text %q, want %q", got, tt.wantText)
			}
			if !tools.IsHalt(err) {
				t.Errorf("got IsHalt false, want true")
			}
			var se *storeError
			if !errors.Is(err, errStore) && !errors.As(err, &se) {
				t.Errorf("got %v, want errors.Is(err, errStore) or errors.As(err, *storeError)", err)
			}
			if res.Success || res.Message != tt.wantText {
				t.Errorf("got %+v, want a failed result with message %q", res, tt.wantText)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		if err := tools.Halt(nil); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})
	t.Run("not halted", func(t *testing.T) {
		if tools.IsHalt(errStore) {
			t.Errorf("got IsHalt true for a plain error, want false")
		}
	})
}

func TestCallContext(t *testing.T) {
	errNoFile := errors.New("no such file")
	cause := errors.New("user pressed stop")
	tests := []struct {
		name    string
		ctx     func() context.Context
		handler tools.Handler[struct{}, string]
		wantErr []error // errors.Is targets; none means a nil error
		wantOK  bool
	}{
		{"cancelled, handler returns ctx error", cancelled, func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
			return "", ctx.Err()
		}, []error{context.Canceled}, false},
		{"cancelled, handler returns other error", cancelled, func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
			return "", errNoFile
		}, []error{context.Canceled, errNoFile}, false},
		{"cancelled with cause", func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			return ctx
		}, func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
			return "", errNoFile
		}, []error{cause, errNoFile}, false},
		{"deadline passed", func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
			_ = cancel
			return ctx
		}, func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
			return "", fmt.Errorf("waiting: %w", ctx.Err())
		}, []error{context.DeadlineExceeded}, false},
		{"cancelled, handler succeeds", cancelled, func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
			return "done anyway", nil
		}, nil, true},
		{"live, handler returns context error", context.Background, func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
			return "", context.DeadlineExceeded // its own timeout, not the caller's
		}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := tools.MustNew("worker", "Does work.", tt.handler)
			res, err := tool.Call(tt.ctx(), tools.Context{}, nil)
			if res.Success != tt.wantOK {
				t.Errorf("got Success %v (%q), want %v", res.Success, res.Message, tt.wantOK)
			}
			if len(tt.wantErr) == 0 && err != nil {
				t.Errorf("got error %v, want nil", err)
			}
			if len(tt.wantErr) > 0 && err == nil {
				t.Fatalf("got nil error, want one matching %v", tt.wantErr)
			}
			for _, target := range tt.wantErr {
				if !errors.Is(err, target) {
					t.Errorf("got %v, want errors.Is(err, %v)", err, target)
				}
			}
		})
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestCallCancelWhileRunning(t *testing.T) {
	started := make(chan struct{})
	tool := tools.MustNew("wait", "Waits until cancelled.", func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		res tools.Result
		err error
	}
	done := make(chan outcome)
	go func() {
		res, err := tool.Call(ctx, tools.Context{}, nil)
		done <- outcome{res, err}
	}()
	<-started
	cancel()
	got := <-done
	if !errors.Is(got.err, context.Canceled) {
		t.Errorf("got error %v, want context.Canceled", got.err)
	}
	if got.res.Success {
		t.Errorf("got a successful result, want a failed one")
	}
}

func TestCallPassesContext(t *testing.T) {
	sess := session.New()
	fs := afero.NewMemMapFs()
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	var gotCtx context.Context
	var got tools.Context
	tool := tools.MustNew("ctx", "Records its context.", func(ctx context.Context, tc tools.Context, _ struct{}) (string, error) {
		gotCtx, got = ctx, tc
		return "", nil
	})
	t.Run("given", func(t *testing.T) {
		if _, err := tool.Call(ctx, tools.Context{Session: sess, FS: fs}, nil); err != nil {
			t.Fatal(err)
		}
		if gotCtx.Value(key{}) != "v" || got.Session == nil || got.FS != fs {
			t.Errorf("got %v and %+v, want the caller's context, a session and the filesystem", gotCtx, got)
		}
	})
	t.Run("nil context", func(t *testing.T) {
		//lint:ignore SA1012 a nil context is what this case checks
		if _, err := tool.Call(nil, tools.Context{}, nil); err != nil { //nolint:staticcheck
			t.Fatal(err)
		}
		if gotCtx == nil || gotCtx.Err() != nil {
			t.Errorf("got context %v, want context.Background()", gotCtx)
		}
		if got.Session != nil || got.FS != nil {
			t.Errorf("got session %v and fs %v, want nil", got.Session, got.FS)
		}
	})
}

func TestCallEmptyInput(t *testing.T) {
	tool := tools.MustNew("ping", "Answers pong.", func(context.Context, tools.Context, struct{}) (string, error) { return "pong", nil })
	tests := []struct {
		name, args, want string
		ok               bool
	}{
		{"nil", "", "pong", true},
		{"empty object", "{}", "pong", true},
		{"null", "null", "pong", true},
		{"spaces", "\r\n ", "pong", true},
		{"unexpected property", `{"a":1}`, "Invalid arguments: a: unknown property (this object takes no properties)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(tt.args))
			if err != nil || res.Success != tt.ok || res.Message != tt.want {
				t.Errorf("got %+v, %v, want Success %v and message %q", res, err, tt.ok, tt.want)
			}
		})
	}
}

func TestCallConcurrent(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	tool := tools.MustNew("double", "Doubles n.", func(ctx context.Context, tc tools.Context, in in) (int, error) {
		if in.N < 0 {
			return 0, errors.New("n must not be negative")
		}
		return 2 * in.N, nil
	})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 100 {
				n := g*1000 + i
				var args, want string
				switch i % 3 {
				case 0:
					args, want = fmt.Sprintf(`{"n":%d}`, n), fmt.Sprint(2*n)
				case 1:
					args, want = fmt.Sprintf(`{"n":"%d"}`, n), "Invalid arguments: n: expected integer, but got string"
				case 2:
					args, want = fmt.Sprintf(`{"n":%d}`, -n-1), "n must not be negative"
				}
				res, err := tool.Call(context.Background(), tools.Context{}, json.RawMessage(args))
				if err != nil || res.Message != want {
					select {
					case errs <- fmt.Sprintf("args %s: got %q, %v, want %q", args, res.Message, err, want):
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

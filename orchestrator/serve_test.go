package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files and transcripts")

// stackPattern matches a goroutine trace inside a JSON string, which differs
// from run to run.
var stackPattern = regexp.MustCompile(`goroutine \d+ \[running\]:[^"]*`)

// TestServeTranscripts runs every testdata/serve/*.txtar transcript: the
// "envs" file names test environments (see catalogue), "in" is what the
// client sends, "out" what the server must answer, line for line. Every
// transcript also checks the end of input: Serve returns nil and every
// environment was closed exactly once.
func TestServeTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/serve/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, f := range ar.Files {
				parts[f.Name] = f.Data
			}
			o := mustNew(t)
			registered := map[string]*testEnv{}
			for _, name := range strings.Fields(string(parts["envs"])) {
				e, err := catalogue(name)
				if err != nil {
					t.Fatal(err)
				}
				if err := o.Register(name, e); err != nil {
					t.Fatal(err)
				}
				registered[name] = e
			}
			var out bytes.Buffer
			if err := o.Serve(context.Background(), bytes.NewReader(parts["in"]), &out, WithBatch()); err != nil {
				t.Errorf("got Serve error %v, want nil at the end of input", err)
			}
			got := stackPattern.ReplaceAll(out.Bytes(), []byte("goroutine N [running]:<stack>"))
			for name, e := range registered {
				if n := e.closeCount(); n != 1 {
					t.Errorf("env %s: got %d closes at the end of input, want 1", name, n)
				}
			}
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "out" {
						ar.Files[i].Data = got
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := parts["out"]
			gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			for i := range max(len(gotLines), len(wantLines)) {
				var g, w string
				if i < len(gotLines) {
					g = gotLines[i]
				}
				if i < len(wantLines) {
					w = wantLines[i]
				}
				if g != w {
					t.Errorf("line %d:\ngot  %s\nwant %s", i+1, g, w)
				}
			}
			// Every line is one JSON object of a known type.
			for i, line := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Errorf("line %d is not a JSON object: %v", i+1, err)
				} else if m["type"] != "response" && m["type"] != "error" {
					t.Errorf("line %d: got type %v, want response or error", i+1, m["type"])
				}
			}
		})
	}
}

// repeatReader yields n bytes of b without allocating them.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = r.b
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// TestServeHugeLine sends a 64 MB command line, then a normal one: the huge
// line gets an error message, the next is served, and the memory allocated
// while serving stays far below the line's size.
func TestServeHugeLine(t *testing.T) {
	const size = 64 << 20
	tests := []struct {
		name     string
		opts     []Option
		limit    int
		maxAlloc uint64
	}{
		{"default limit", nil, DefaultMaxLineBytes, 3 * DefaultMaxLineBytes},
		{"1 MiB limit", []Option{WithMaxLineBytes(1 << 20)}, 1 << 20, 8 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t, tt.opts...)
			echo, _ := catalogue("echo")
			_ = o.Register("echo", echo)
			prefix := `{"type":"command","environment":"echo","command":"`
			in := io.MultiReader(
				strings.NewReader(prefix),
				&repeatReader{b: 'a', n: size},
				strings.NewReader("\"}\n"+`{"type":"command","environment":"echo","command":"after"}`+"\n"),
			)
			var out bytes.Buffer
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := o.Serve(context.Background(), in, &out, WithBatch())
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("got Serve error %v, want nil", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d bytes in all while serving a %d-byte line", alloc, size)
			if alloc > tt.maxAlloc {
				t.Errorf("got %d bytes allocated while serving a %d-byte line, want at most %d", alloc, size, tt.maxAlloc)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("got %d lines, want 2", len(lines))
			}
			var e errorMessage
			if err := json.Unmarshal([]byte(lines[0]), &e); err != nil {
				t.Fatal(err)
			}
			wantLen := len(prefix) + size + 2
			want := errorMessage{Type: "error", Message: "Failed to parse command: the line has " + strconv.Itoa(wantLen) + " bytes, more than the limit of " + strconv.Itoa(tt.limit) + "; it was discarded. Send shorter commands (write long content to a file first)."}
			if e != want {
				t.Errorf("got %+v, want %+v", e, want)
			}
			var r responseMessage
			if err := json.Unmarshal([]byte(lines[1]), &r); err != nil {
				t.Fatal(err)
			}
			if r.Response.Output != "echo: after" || !r.Response.Success {
				t.Errorf("after the huge line: got %+v, want the echo of \"after\"", r.Response)
			}
		})
	}
}

// TestServeLineLimitEdges checks lines at and around the limit, and a last
// line with no newline.
func TestServeLineLimitEdges(t *testing.T) {
	cmd := func(text string) string {
		return `{"type":"command","environment":"echo","command":"` + text + `"}`
	}
	exact := cmd(strings.Repeat("x", 100))
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string // "ok:<output>" or "error"
	}{
		{"exactly at the limit", exact + "\n", len(exact), []string{"ok:echo: " + strings.Repeat("x", 100)}},
		{"at the limit with CRLF", exact + "\r\n", len(exact), []string{"ok:echo: " + strings.Repeat("x", 100)}},
		{"one over", exact + " \n", len(exact), []string{"error"}},
		{"no final newline", cmd("last"), 1 << 10, []string{"ok:echo: last"}},
		{"over, no final newline", exact + "  ", len(exact), []string{"error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustNew(t, WithMaxLineBytes(tt.limit))
			echo, _ := catalogue("echo")
			_ = o.Register("echo", echo)
			var out bytes.Buffer
			if err := o.Serve(context.Background(), strings.NewReader(tt.in), &out, WithBatch()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				var m struct {
					Type     string
					Response struct{ Output string }
				}
				_ = json.Unmarshal([]byte(line), &m)
				if m.Type == "error" {
					got = append(got, "error")
				} else {
					got = append(got, "ok:"+m.Response.Output)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestServeCancel stops Serve through its context while it waits for input.
func TestServeCancel(t *testing.T) {
	o := mustNew(t)
	echo, _ := catalogue("echo")
	_ = o.Register("echo", echo)
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- o.Serve(ctx, pr, io.Discard) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if n := echo.closeCount(); n != 1 {
		t.Errorf("got %d closes, want 1", n)
	}
}

// TestServeShutdownError reports a failing Close at the end of input.
func TestServeShutdownError(t *testing.T) {
	o := mustNew(t)
	_ = o.Register("bad", &testEnv{close: func() error { return errors.New("stuck") }})
	err := o.Serve(context.Background(), strings.NewReader(""), io.Discard)
	if !errors.Is(err, ErrShutdown) || !strings.Contains(err.Error(), "orchestrator: close bad: stuck") {
		t.Errorf("got %v, want ErrShutdown with the close error", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("pipe gone") }

// TestServeWriteError stops at a failed write and still shuts down.
func TestServeWriteError(t *testing.T) {
	o := mustNew(t)
	echo, _ := catalogue("echo")
	_ = o.Register("echo", echo)
	in := strings.Repeat(`{"type":"command","environment":"echo","command":"x"}`+"\n", 3)
	err := o.Serve(context.Background(), strings.NewReader(in), failWriter{}, WithBatch())
	if err == nil || !strings.Contains(err.Error(), "orchestrator: serve: write: pipe gone") {
		t.Errorf("got %v, want the write error", err)
	}
	if n := echo.closeCount(); n != 1 {
		t.Errorf("got %d closes, want 1", n)
	}
}

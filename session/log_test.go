package session_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/visibility"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// stepClock returns a clock that starts at a fixed UTC time and moves 1.25s
// per call. Dispatch calls it under the session's lock, so it needs none.
func stepClock() func() time.Time {
	t := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(1250 * time.Millisecond)
		return t
	}
}

// stoppedClock fails the test if the session asks it for the time: replay
// must keep the logged times.
func stoppedClock(t *testing.T) func() time.Time {
	return func() time.Time {
		t.Error("the clock was read during replay")
		return time.Time{}
	}
}

// sampleEvents covers every event type of newCounter, one failing reducer
// included.
var sampleEvents = []any{
	added{N: 1},
	renamed{Name: "a"},
	visibility.SetOverride{Path: "x", Mode: visibility.Summary},
	boom{},
	visibility.ClearOverride{Path: "x"},
	visibility.SetOverride{Path: "y.z", Mode: visibility.Full},
	renamed{Name: "b"},
	visibility.ClearAll{},
	visibility.SetOverride{Path: "q", Mode: visibility.Summary},
	added{N: 41},
}

// dispatchAll dispatches events and returns the joined failures.
func dispatchAll(sess *session.Session, events []any) error {
	var errs []error
	for _, e := range events {
		if err := sess.Dispatch(e); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func writeLog(t *testing.T, sess *session.Session) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := sess.WriteLog(&buf); err != nil {
		t.Fatalf("WriteLog: %v", err)
	}
	return buf.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: got\n%s\nwant\n%s", path, got, want)
	}
}

func TestWriteLogReplay(t *testing.T) {
	orig := newCounter(t, session.WithClock(stepClock()))
	origErr := dispatchAll(orig, sampleEvents)
	if origErr == nil {
		t.Fatal("dispatching boom: got nil error, want the reducer's failure")
	}
	saved := writeLog(t, orig)
	golden(t, "log.golden", saved)

	resumed := newCounter(t, session.WithClock(stoppedClock(t)))
	replayErr := resumed.ReplayLog(bytes.NewReader(saved))

	var re *session.ReducerError
	if !errors.As(replayErr, &re) || re.Slice != "count" || re.Event != "test.boom" {
		t.Errorf("replay error: got %v, want the boom reducer's failure on slice count", replayErr)
	}
	if replayErr != nil && replayErr.Error() != origErr.Error() {
		t.Errorf("replay error: got %q, want %q as Dispatch returned", replayErr, origErr)
	}
	if got, want := stateOf(t, resumed), stateOf(t, orig); !got.equal(want) {
		t.Errorf("state: got %+v, want %+v", got, want)
	}
	if got, want := resumed.Events(), orig.Events(); !reflect.DeepEqual(got, want) {
		t.Errorf("log: got\n%+v\nwant\n%+v", got, want)
	}
	if got, want := resumed.Seq(), uint64(len(sampleEvents)); got != want {
		t.Errorf("seq: got %d, want %d", got, want)
	}
	if got := writeLog(t, resumed); !bytes.Equal(got, saved) {
		t.Errorf("log written after replay: got\n%s\nwant\n%s", got, saved)
	}
	// Time survives exactly, not just to the second.
	if got, want := resumed.Events()[0].Time, time.Date(2025, 1, 2, 3, 4, 6, 250e6, time.UTC); !got.Equal(want) {
		t.Errorf("first record time: got %v, want %v", got, want)
	}
}

func TestReplayContinues(t *testing.T) {
	orig := newCounter(t, session.WithClock(stepClock()))
	if err := dispatchAll(orig, []any{added{N: 1}, added{N: 2}, renamed{Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(writeLog(t, orig)), "\n")

	sess := newCounter(t, session.WithClock(stepClock()))
	if err := sess.ReplayLog(strings.NewReader(lines[0] + lines[1])); err != nil {
		t.Fatal(err)
	}
	if err := sess.ReplayLog(strings.NewReader(lines[2])); err != nil {
		t.Fatal(err)
	}
	if got, want := stateOf(t, sess), stateOf(t, orig); !got.equal(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	err := sess.ReplayLog(strings.NewReader(lines[0]))
	if want := "session: replay log: line 1: seq 1, want 4"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("replaying again: got %v, want an error starting %q", err, want)
	}
	if got := sess.Seq(); got != 3 {
		t.Errorf("got seq %d, want 3", got)
	}
}

func TestReplayBadInput(t *testing.T) {
	const limit = 200
	orig := newCounter(t, session.WithClock(stepClock()))
	if err := dispatchAll(orig, []any{added{N: 1}, renamed{Name: "two"}}); err != nil {
		t.Fatal(err)
	}
	good := strings.SplitAfter(string(writeLog(t, orig)), "\n")
	line1, line2 := good[0], good[1]
	const ts = `"time":"2025-01-02T03:04:07.5Z"`

	tests := []struct {
		name    string
		log     string
		wantErr string
	}{
		{
			name:    "not JSON",
			log:     line1 + "this is not json\n",
			wantErr: "session: replay log: line 2: not a log record: invalid character 'h' in literal true (expecting 'r')",
		},
		{
			name:    "truncated JSON",
			log:     line1 + `{"seq":2,"time":` + "\n",
			wantErr: "session: replay log: line 2: not a log record: unexpected EOF",
		},
		{
			name:    "JSON after the record",
			log:     line1 + strings.TrimSuffix(line2, "\n") + ` {"seq":3}` + "\n",
			wantErr: "session: replay log: line 2: not a log record: more than one JSON value on the line",
		},
		{
			name:    "closing brace after the record",
			log:     line1 + strings.TrimSuffix(line2, "\n") + `}` + "\n",
			wantErr: "session: replay log: line 2: not a log record: more than one JSON value on the line",
		},
		{
			name:    "unregistered event type",
			log:     line1 + `{"seq":2,` + ts + `,"type":"test.unknown","event":{}}` + "\n",
			wantErr: `session: replay log: line 2: event type "test.unknown" is not registered; call session.RegisterEvent for it`,
		},
		{
			name:    "Go type name of an unregistered event",
			log:     line1 + `{"seq":2,` + ts + `,"type":"session_test.orphan","event":{}}` + "\n",
			wantErr: `session: replay log: line 2: event type "session_test.orphan" is not registered`,
		},
		{
			name:    "seq skips",
			log:     line1 + strings.Replace(line2, `"seq":2`, `"seq":3`, 1),
			wantErr: "session: replay log: line 2: seq 3, want 2 (the log must continue this session's)",
		},
		{
			name:    "seq repeats",
			log:     line1 + line1,
			wantErr: "session: replay log: line 2: seq 1, want 2",
		},
		{
			name:    "seq does not start at 1",
			log:     line2,
			wantErr: "session: replay log: line 1: seq 2, want 1",
		},
		{
			name:    "seq missing",
			log:     line1 + `{` + ts + `,"type":"test.added","event":{"N":1}}` + "\n",
			wantErr: "session: replay log: line 2: not a log record: want seq, time, type and event",
		},
		{
			name:    "type missing",
			log:     line1 + `{"seq":2,` + ts + `,"event":{"N":1}}` + "\n",
			wantErr: "session: replay log: line 2: not a log record: want seq, time, type and event",
		},
		{
			name:    "event missing",
			log:     line1 + `{"seq":2,` + ts + `,"type":"test.added"}` + "\n",
			wantErr: "session: replay log: line 2: not a log record: want seq, time, type and event",
		},
		{
			name:    "unknown field",
			log:     line1 + `{"seq":2,` + ts + `,"type":"test.added","event":{"N":1},"extra":true}` + "\n",
			wantErr: `session: replay log: line 2: not a log record: json: unknown field "extra"`,
		},
		{
			name:    "event does not fit its type",
			log:     line1 + `{"seq":2,` + ts + `,"type":"test.added","event":{"N":"one"}}` + "\n",
			wantErr: `session: replay log: line 2: event "test.added": json: cannot unmarshal string`,
		},
		{
			name:    "invalid mode",
			log:     line1 + `{"seq":2,` + ts + `,"type":"visibility.set","event":{"path":"a","mode":"half"}}` + "\n",
			wantErr: `session: replay log: line 2: event "visibility.set": visibility: unknown mode "half": want full or summary`,
		},
		{
			name:    "line too long",
			log:     line1 + pad(line2, limit+1) + "\n",
			wantErr: "session: replay log: line 2: line longer than 200 bytes",
		},
		{
			name:    "line too long at end of input",
			log:     line1 + pad(line2, limit+1),
			wantErr: "session: replay log: line 2: line longer than 200 bytes",
		},
		{
			name:    "line far too long",
			log:     line1 + pad(line2, 200<<10) + "\n" + line2,
			wantErr: "session: replay log: line 2: line longer than 200 bytes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := newCounter(t, session.WithClock(stepClock()), session.WithMaxLogLine(limit))
			want := stateOf(t, sess)
			err := sess.ReplayLog(strings.NewReader(tt.log))
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want one starting %q", err, tt.wantErr)
			}
			if got := sess.Seq(); got != 0 {
				t.Errorf("got seq %d, want 0 (nothing applied)", got)
			}
			if got := len(sess.Events()); got != 0 {
				t.Errorf("got %d events, want 0 (nothing applied)", got)
			}
			if got := stateOf(t, sess); !got.equal(want) {
				t.Errorf("state changed: got %+v, want %+v", got, want)
			}
		})
	}

	t.Run("read error", func(t *testing.T) {
		sess := newCounter(t)
		r := &failingReader{data: []byte(line1 + `{"seq":2,`), err: errors.New("disk on fire")}
		err := sess.ReplayLog(r)
		if want := "session: replay log: line 2: disk on fire"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
		if got := sess.Seq(); got != 0 {
			t.Errorf("got seq %d, want 0", got)
		}
	})
}

// TestReplayLineLimit pins the limit: a line of exactly the limit is read,
// one byte more is not, whatever ends the line.
func TestReplayLineLimit(t *testing.T) {
	const limit = 120
	orig := newCounter(t, session.WithClock(stepClock()))
	if err := orig.Dispatch(added{N: 7}); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(writeLog(t, orig)), "\n")

	tests := []struct {
		name   string
		log    string
		wantOK bool
	}{
		{"at the limit, newline", pad(line, limit) + "\n", true},
		{"at the limit, CRLF", pad(line, limit) + "\r\n", true},
		{"at the limit, end of input", pad(line, limit), true},
		{"over the limit, newline", pad(line, limit+1) + "\n", false},
		{"over the limit, CRLF", pad(line, limit+1) + "\r\n", false},
		{"over the limit, end of input", pad(line, limit+1), false},
		{"blank lines around", "\n  \n" + pad(line, limit) + "\n\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := newCounter(t, session.WithMaxLogLine(limit))
			err := sess.ReplayLog(strings.NewReader(tt.log))
			if tt.wantOK {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				if got := session.Get(sess, countSlice); got != 7 {
					t.Errorf("got count %d, want 7", got)
				}
				return
			}
			if want := "line longer than 120 bytes"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want an error containing %q", err, want)
			}
		})
	}
	t.Run("default limit", func(t *testing.T) {
		for _, opt := range []session.Option{session.WithMaxLogLine(0), session.WithMaxLogLine(-1)} {
			sess := newCounter(t, opt)
			if err := sess.ReplayLog(strings.NewReader(pad(line, 70<<10))); err != nil {
				t.Errorf("got %v, want nil: the default limit is %d bytes", err, session.MaxLogLine)
			}
		}
	})
}

// pad returns the JSON object line grown to exactly n bytes with spaces after
// its opening brace.
func pad(line string, n int) string {
	line = strings.TrimRight(line, "\r\n")
	if len(line) > n {
		panic("pad: line already longer than n")
	}
	return "{" + strings.Repeat(" ", n-len(line)) + line[1:]
}

type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// shadow is registered under the Go type name of orphan.
type shadow struct{ Note string }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteLogErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, sess *session.Session)
		w       io.Writer // nil: a buffer
		wantErr string
	}{
		{
			name: "unregistered event type",
			setup: func(t *testing.T, sess *session.Session) {
				mustDispatch(t, sess, added{N: 1}, orphan{Note: "x"})
			},
			wantErr: "session: write log: event 2 has type session_test.orphan, which is not registered; call session.RegisterEvent for it",
		},
		{
			name: "Go type name that is another event's registered name",
			setup: func(t *testing.T, sess *session.Session) {
				if err := session.RegisterEvent[shadow](sess, "session_test.orphan"); err != nil {
					t.Fatal(err)
				}
				mustDispatch(t, sess, orphan{Note: "x"})
			},
			wantErr: "session: write log: event 1 has type session_test.orphan, which is not registered; call session.RegisterEvent for it",
		},
		{
			name: "event that cannot be encoded",
			setup: func(t *testing.T, sess *session.Session) {
				if err := sess.Dispatch(visibility.SetOverride{Path: "a", Mode: visibility.Mode(9)}); err == nil {
					t.Fatal("dispatching an invalid mode: got nil error, want one")
				}
			},
			wantErr: "session: write log: event 1 (visibility.set): json: error calling MarshalJSON for type visibility.Mode: visibility: invalid mode 9",
		},
		{
			name: "writer fails",
			setup: func(t *testing.T, sess *session.Session) {
				mustDispatch(t, sess, added{N: 1})
			},
			w:       failingWriter{},
			wantErr: "session: write log: disk full",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := newCounter(t)
			tt.setup(t, sess)
			var buf bytes.Buffer
			var w io.Writer = &buf
			if tt.w != nil {
				w = tt.w
			}
			err := sess.WriteLog(w)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got %v, want %q", err, tt.wantErr)
			}
			if buf.Len() != 0 {
				t.Errorf("got %d bytes written, want none", buf.Len())
			}
		})
	}
	t.Run("empty log", func(t *testing.T) {
		var buf bytes.Buffer
		if err := session.New().WriteLog(&buf); err != nil || buf.Len() != 0 {
			t.Errorf("got %q, %v, want no output and nil", buf.String(), err)
		}
	})
}

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"
)

// MaxLogLine is the longest line ReplayLog accepts by default, in bytes; see
// [WithMaxLogLine].
const MaxLogLine = 16 << 20

// logLine is one JSON line of a saved log.
type logLine struct {
	Seq   uint64          `json:"seq"`
	Time  time.Time       `json:"time"`
	Type  string          `json:"type"`
	Event json.RawMessage `json:"event"`
}

// WriteLog writes the whole log to w as JSON lines, one event per line:
// {"seq":1,"time":"...","type":"name","event":{...}}. An event whose type was
// not registered with [RegisterEvent] cannot be replayed, so WriteLog refuses
// it, naming the type, before writing anything.
func (s *Session) WriteLog(w io.Writer) error {
	records := s.Events()
	if len(records) > 0 && records[0].Seq != 1 {
		return fmt.Errorf("session: write log: the oldest %d events were dropped (WithLogLimit), so the log cannot rebuild the state; save a Snapshot instead", records[0].Seq-1)
	}
	var buf bytes.Buffer
	for _, r := range records {
		// The name must be registered for this very type: an unregistered
		// event is logged under its Go type name, which may happen to be
		// another type's registered name.
		if t, ok := s.eventType(r.Type); !ok || t != reflect.TypeOf(r.Event) {
			return fmt.Errorf("session: write log: event %d has type %s, which is not registered; call session.RegisterEvent for it", r.Seq, r.Type)
		}
		ev, err := json.Marshal(r.Event)
		if err != nil {
			return fmt.Errorf("session: write log: event %d (%s): %w", r.Seq, r.Type, err)
		}
		line, err := json.Marshal(logLine{Seq: r.Seq, Time: r.Time, Type: r.Type, Event: ev})
		if err != nil {
			return fmt.Errorf("session: write log: event %d (%s): %w", r.Seq, r.Type, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	_, err := w.Write(buf.Bytes())
	if err != nil {
		return fmt.Errorf("session: write log: %w", err)
	}
	return nil
}

func (s *Session) eventType(name string) (reflect.Type, bool) {
	root := s.root
	root.mu.RLock()
	defer root.mu.RUnlock()
	t, ok := root.types[name]
	return t, ok
}

// ReplayLog reads a log written by [Session.WriteLog] and dispatches its events
// with their original sequence numbers and times, so replaying a saved log into
// a fresh session with the same slices and reducers gives the same state and
// the same log. Every line is decoded and checked first (JSON, a registered
// type, a sequence that continues this session's log, at most [MaxLogLine]
// bytes or the [WithMaxLogLine] limit); if any line is bad, nothing is
// dispatched and the error names the line. Reducer failures during replay are
// returned joined, as Dispatch would. A transaction's view cannot replay a
// log: its events would need sequence numbers it has not got.
func (s *Session) ReplayLog(r io.Reader) error {
	if s.parent != nil {
		return errors.New("session: replay log: the session is a transaction's view; replay into the session itself")
	}
	br := bufio.NewReaderSize(r, 64<<10)
	next := s.Seq() + 1
	var events []Record
	for n := 1; ; n++ {
		line, err := readLine(br, s.maxLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("session: replay log: line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, err := s.decodeLine(line)
		if err != nil {
			return fmt.Errorf("session: replay log: line %d: %w", n, err)
		}
		if rec.Seq != next {
			return fmt.Errorf("session: replay log: line %d: seq %d, want %d (the log must continue this session's)", n, rec.Seq, next)
		}
		next++
		events = append(events, rec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seq+1 != next-uint64(len(events)) {
		return errors.New("session: replay log: session changed during replay")
	}
	var errs []error
	for _, rec := range events {
		if err := s.dispatchLocked(rec.Event, rec.Time, rec.Seq); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Session) decodeLine(line []byte) (Record, error) {
	var l logLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Record{}, fmt.Errorf("not a log record: %v", err)
	}
	if len(bytes.TrimSpace(line[dec.InputOffset():])) > 0 {
		return Record{}, errors.New("not a log record: more than one JSON value on the line")
	}
	if l.Type == "" || l.Seq == 0 || len(l.Event) == 0 {
		return Record{}, errors.New("not a log record: want seq, time, type and event")
	}
	et, ok := s.eventType(l.Type)
	if !ok {
		return Record{}, fmt.Errorf("event type %q is not registered; call session.RegisterEvent for it", l.Type)
	}
	v := reflect.New(et)
	if err := json.Unmarshal(l.Event, v.Interface()); err != nil {
		return Record{}, fmt.Errorf("event %q: %v", l.Type, err)
	}
	return Record{Seq: l.Seq, Time: l.Time, Type: l.Type, Event: v.Elem().Interface()}, nil
}

// readLine returns the next line without its "\n" or "\r\n", failing on lines
// longer than limit (not counting that ending) after discarding the rest of
// that line.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	tooLong := func() error { return fmt.Errorf("line longer than %d bytes", limit) }
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit+len("\r\n") {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			return nil, tooLong()
		}
		line = append(line, chunk...)
		switch err {
		case nil, io.EOF:
			if err == io.EOF && len(line) == 0 {
				return nil, io.EOF
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) > limit {
				return nil, tooLong()
			}
			return line, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return nil, err
		}
	}
}

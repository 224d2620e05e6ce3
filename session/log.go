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
// it, naming the type, before writing anything. It refuses too a log that
// could not rebuild the state: one [WithLogLimit] trimmed, or one of a
// session that [Session.Restore] set back; save a [Snapshot] then.
func (s *Session) WriteLog(w io.Writer) error {
	lines, err := s.logLines(0)
	if err != nil {
		return fmt.Errorf("session: write log: %w", err)
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("session: write log: %w", err)
	}
	return nil
}

// LogLines returns the lines [Session.WriteLog] would write for the events
// after event number after, oldest first, without their newlines, for a
// caller that saves the log as it grows: the lines of the events after
// the last saved. Its cost is that of the events it encodes, not of the
// whole log. It stops at the first event it cannot encode (by the rules
// of WriteLog), returning the lines of the events before it and an error
// naming it, so that what was returned replays with no gap; an event
// whose type gets registered later can be encoded then.
func (s *Session) LogLines(after uint64) ([]json.RawMessage, error) {
	lines, err := s.logLines(after)
	if err != nil {
		return lines, fmt.Errorf("session: log lines: %w", err)
	}
	return lines, nil
}

func (s *Session) logLines(after uint64) ([]json.RawMessage, error) {
	var lines []json.RawMessage
	// The events are copied a chunk at a time, so that an event that
	// cannot be encoded costs what the chunk does, not the log after it.
	for {
		records, restored := s.eventsAfter(after, logChunk)
		if restored {
			return nil, errors.New("the session was set back to a snapshot (Restore), so its log cannot rebuild the state; save a Snapshot instead")
		}
		if len(records) == 0 {
			return lines, nil
		}
		if records[0].Seq != after+1 {
			return nil, fmt.Errorf("the oldest %d events were dropped (WithLogLimit), so the log cannot rebuild the state; save a Snapshot instead", records[0].Seq-1)
		}
		for _, r := range records {
			line, err := s.encode(r)
			if err != nil {
				return lines, err
			}
			lines = append(lines, line)
		}
		after = records[len(records)-1].Seq
	}
}

// logChunk is how many events logLines copies at a time.
const logChunk = 256

// encode returns r as a line of a saved log.
func (s *Session) encode(r Record) (json.RawMessage, error) {
	ev, ok := r.Event.(UnknownEvent)
	if !ok {
		// The name must be registered for this very type: an unregistered
		// event is logged under its Go type name, which may happen to be
		// another type's registered name.
		if t, ok := s.eventType(r.Type); !ok || t != reflect.TypeOf(r.Event) {
			return nil, fmt.Errorf("event %d has type %s, which is not registered; call session.RegisterEvent for it", r.Seq, r.Type)
		}
	}
	data, err := json.Marshal(r.Event)
	if err != nil {
		return nil, fmt.Errorf("event %d (%s): %w", r.Seq, r.Type, err)
	}
	if ok {
		r.Type = ev.Type
	}
	line, err := json.Marshal(logLine{Seq: r.Seq, Time: r.Time, Type: r.Type, Event: data})
	if err != nil {
		return nil, fmt.Errorf("event %d (%s): %w", r.Seq, r.Type, err)
	}
	return line, nil
}

// UnknownEvent is an event of a saved log whose type this session has no
// name for, kept as it was by a replay with [KeepUnknownEvents]: no
// reducer applies it, and [Session.WriteLog] writes it back as it was
// read. When its type is registered later ([RegisterEvent]), it is
// decoded into that type in the log, and the reducers of that type apply
// it as they do an event dispatched before them. Only a replay makes one:
// [Session.Dispatch] refuses it.
type UnknownEvent struct {
	Type string          // the name the log gave its type
	JSON json.RawMessage // the event as the log held it
}

// MarshalJSON returns the event as the log held it.
func (e UnknownEvent) MarshalJSON() ([]byte, error) {
	if len(e.JSON) == 0 {
		return []byte("null"), nil
	}
	return e.JSON, nil
}

// ReplayOption changes how [Session.ReplayLog] reads a log.
type ReplayOption func(*replayConfig)

type replayConfig struct {
	keepUnknown bool
}

// KeepUnknownEvents makes [Session.ReplayLog] keep an event whose type is
// not registered, as an [UnknownEvent], instead of refusing the log: for a
// program that resumes a log saved by a run that had more of its parts
// loaded than this one (an environment that records its own events).
func KeepUnknownEvents() ReplayOption {
	return func(c *replayConfig) { c.keepUnknown = true }
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
// type unless [KeepUnknownEvents] is given, a sequence that continues this session's log, at most [MaxLogLine]
// bytes or the [WithMaxLogLine] limit); if any line is bad, nothing is
// dispatched and the error names the line. Reducer failures during replay are
// returned joined, as Dispatch would. A transaction's view cannot replay a
// log: its events would need sequence numbers it has not got.
func (s *Session) ReplayLog(r io.Reader, opts ...ReplayOption) error {
	var cfg replayConfig
	for _, o := range opts {
		o(&cfg)
	}
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
		rec, err := s.decodeLine(line, cfg.keepUnknown)
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

func (s *Session) decodeLine(line []byte, keepUnknown bool) (Record, error) {
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
	if !ok && keepUnknown {
		return Record{Seq: l.Seq, Time: l.Time, Type: l.Type, Event: UnknownEvent{Type: l.Type, JSON: l.Event}}, nil
	}
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

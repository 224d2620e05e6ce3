package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// The kinds of transcript records, a [Record]'s Kind: [KindRun],
// [KindRender], [KindMessage], [KindModel], [KindCall], [KindTool], [KindExpansion],
// [KindSession], [KindError] and [KindEnd].
const (
	KindRun       = "run"       // a run started: the task, the action mode
	KindRender    = "render"    // what the model is shown changed: the report, what opened or closed, the system message when it changed
	KindMessage   = "message"   // a message joined the conversation
	KindModel     = "model"     // a model call ended: usage (with the prefix shared with the previous request), timing
	KindCall      = "call"      // a tool call is starting: its ID, name and arguments (a text action's ID is empty)
	KindTool      = "tool"      // a tool call ran: arguments, result, timing
	KindExpansion = "expansion" // open_sections opened tool-bearing sections
	KindSession   = "session"   // session events, as session.WriteLog lines
	KindError     = "error"     // a failed model call or step
	KindEnd       = "end"       // the run ended: answer, usage, error
)

// MaxTranscriptLine bounds one transcript line [ReadTranscript] accepts.
const MaxTranscriptLine = 64 << 20

// Record is one line of a transcript. Kind says which fields are set.
type Record struct {
	Kind         string            `json:"kind"`
	Time         time.Time         `json:"time"`
	Step         int               `json:"step"`
	Task         string            `json:"task,omitempty"`
	Actions      string            `json:"actions,omitempty"`
	Disclosure   string            `json:"disclosure,omitempty"`
	Resumed      bool              `json:"resumed,omitempty"`
	Message      *Message          `json:"message,omitempty"`
	Tool         *ToolRecord       `json:"tool,omitempty"`
	Render       *RenderRecord     `json:"render,omitempty"`
	Expansion    *ExpansionRecord  `json:"expansion,omitempty"`
	Events       []json.RawMessage `json:"events,omitempty"`
	Usage        *Usage            `json:"usage,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
	ElapsedMS    float64           `json:"elapsed_ms,omitempty"`
	Answer       string            `json:"answer,omitempty"`
	CostUSD      float64           `json:"cost_usd,omitempty"` // the run's estimated cost, on the end record
	Error        string            `json:"error,omitempty"`
}

// ToolRecord is one tool call and its result.
type ToolRecord struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Success   bool   `json:"success"`
	Result    string `json:"result"`
	Error     string `json:"error,omitempty"` // a Go error that ended the run
}

// RenderRecord is a render that changed which sections show, and how.
type RenderRecord struct {
	Tokens  int             `json:"tokens,omitempty"`
	Opened  []string        `json:"opened,omitempty"`
	Closed  []string        `json:"closed,omitempty"`
	Report  []SectionRecord `json:"report"`
	Screens []SectionRecord `json:"screens,omitempty"`
}

// SectionRecord is how one section rendered (prompt.SectionReport, with the
// mode and the reason as text).
type SectionRecord struct {
	Path     string `json:"path"`
	Visible  bool   `json:"visible"`
	Mode     string `json:"mode"`
	Why      string `json:"why"`
	HasTools bool   `json:"has_tools,omitempty"`
	Tokens   int    `json:"tokens,omitempty"`
}

// sectionRecords converts a render report, leaving out disabled sections.
func sectionRecords(rep []prompt.SectionReport) []SectionRecord {
	out := make([]SectionRecord, 0, len(rep))
	for _, s := range rep {
		if s.Enabled {
			out = append(out, SectionRecord{Path: s.Path, Visible: s.Visible, Mode: s.Mode.String(), Why: s.Why.String(), HasTools: s.HasTools, Tokens: s.Tokens})
		}
	}
	return out
}

// ExpansionRecord is an open_sections call that opened tool-bearing
// sections.
type ExpansionRecord struct {
	Keys   []string `json:"keys"`
	Paths  []string `json:"paths"`
	Reason string   `json:"reason,omitempty"`
	Count  int      `json:"count"` // expansions so far in the run
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// transcriptWriter writes records as JSON lines and keeps the first error;
// the run stops at it ([run.recorded]), so nothing runs unrecorded.
type transcriptWriter struct {
	enc  *json.Encoder
	werr error
}

func newTranscriptWriter(w io.Writer) *transcriptWriter {
	if w == nil {
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &transcriptWriter{enc: enc}
}

func (t *transcriptWriter) write(rec Record) {
	if t.werr == nil {
		t.werr = t.enc.Encode(rec)
	}
}

// err returns the first write error, worded for the end of the run.
func (t *transcriptWriter) err() error {
	if t == nil || t.werr == nil {
		return nil
	}
	return fmt.Errorf("agent: transcript: %w; the run stops so that nothing goes unrecorded", t.werr)
}

// Transcript is a transcript read back: its records and the conversation
// [Agent.Resume] continues.
type Transcript struct {
	// Records are the lines read, in order; empty when read with
	// [ReadForResume].
	Records []Record
	// Incomplete is the number of the last line when a run stopped while
	// writing it, so it was cut short and left out, else 0; Complete is
	// then the length in bytes of the lines before it.
	Incomplete int
	Complete   int64
	// Start is the offset in bytes of the line of the last run that was
	// not a resume: the conversation a resume continues starts there, so
	// the file's bytes from Start (up to Complete when a line was cut
	// short) resume as the whole file does.
	Start int64

	conv  conversation
	built bool // conv holds the records
}

// ReadTranscript reads the JSON lines a run wrote. A line that is not a
// record, or is longer than [MaxTranscriptLine], is an error naming it;
// a last line cut short (the run stopped while writing it) is left out
// and named in [Transcript.Incomplete].
func ReadTranscript(r io.Reader) (*Transcript, error) { return readTranscript(r, true) }

// ReadForResume reads a transcript as [ReadTranscript] does, keeping only
// what [Agent.Resume] needs (the conversation, the calls started, the
// session events, the last answer): the memory it takes follows the
// conversation, not the size of the file.
func ReadForResume(r io.Reader) (*Transcript, error) { return readTranscript(r, false) }

func readTranscript(r io.Reader, keep bool) (*Transcript, error) {
	complete := true      // the last line read ended with a newline
	var start, next int64 // the offsets of the last line read and of the one after
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxTranscriptLine)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		if adv > 0 {
			complete = data[adv-1] == '\n'
			start, next = next, next+int64(adv)
		}
		return adv, tok, err
	})
	tr := &Transcript{built: true, conv: conversation{reply: -1}}
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		rec, err := decodeLine(sc.Bytes(), keep)
		if err != nil && !complete {
			// The last line has no newline and no whole record: the run
			// stopped while writing it.
			tr.Incomplete, tr.Complete = line, start
			break
		}
		if err != nil {
			return nil, fmt.Errorf("agent: read transcript: line %d: %w; only the last line may be cut short (by a run that stopped while writing it)", line, err)
		}
		if rec.Kind == "" {
			return nil, fmt.Errorf("agent: read transcript: line %d: no kind; is this a transcript?", line)
		}
		if keep {
			tr.Records = append(tr.Records, rec)
		}
		if rec.Kind == KindRun && !rec.Resumed {
			tr.Start = start
		}
		tr.conv.add(rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("agent: read transcript: line %d: %w", line+1, err)
	}
	if !keep {
		if err := tr.resumable(); err != nil {
			return nil, fmt.Errorf("agent: read transcript: %w", err)
		}
	}
	return tr, nil
}

// resumable says why the transcript cannot be resumed, if it cannot: it
// holds no run, or its last conversation is in another file.
func (t *Transcript) resumable() error {
	c := t.build()
	switch {
	case c.continued:
		return errors.New("its first run resumes a conversation that is not in it: it continues another transcript (a resumed run written to a file of its own); resume that transcript, or the two joined, that one first")
	case !c.run && len(c.unknown) > 0:
		return fmt.Errorf("it holds no run to resume, only records of kinds not understood (%s); is this a transcript, of this version?", strings.Join(c.unknown, ", "))
	case !c.run:
		return errors.New("it holds no run to resume; is this a transcript?")
	}
	return nil
}

// resumeKinds are the records [ReadForResume] decodes whole; it checks
// the others are JSON records and skips them.
var resumeKinds = map[string]bool{KindRun: true, KindMessage: true, KindCall: true, KindTool: true, KindSession: true, KindEnd: true}

// decodeLine decodes a record; with all false, only the kinds a resume
// needs are decoded whole, and the others checked to be JSON.
func decodeLine(line []byte, all bool) (Record, error) {
	var rec Record
	if all {
		return rec, json.Unmarshal(line, &rec)
	}
	kind, ok := leadingKind(line)
	if !ok {
		if err := json.Unmarshal(line, &kindOnly{&kind}); err != nil {
			return rec, err
		}
	}
	if resumeKinds[kind] || !json.Valid(line) {
		// Decoding a line that is not JSON names its syntax error.
		return rec, json.Unmarshal(line, &rec)
	}
	rec.Kind = kind
	return rec, nil
}

// leadingKind returns the kind of a record line as a run writes it, with
// the kind first: the other records are skipped without decoding them.
func leadingKind(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"kind":"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// kindOnly decodes a record's kind alone.
type kindOnly struct {
	Kind *string `json:"kind"`
}

// conversation is what a resume continues: the last run's conversation
// (from the last run that was not itself a resume), the calls its
// replies started, and the session's events.
type conversation struct {
	turns   []turn
	reply   int // the index of the last assistant message in turns, or -1
	session []json.RawMessage
	answer  string

	run       bool     // a run record was read
	fresh     bool     // a run that was not a resume was read
	continued bool     // a resume came before any such run: its conversation is in another file
	unknown   []string // record kinds not understood, the first few
}

// maxUnknown bounds the record kinds not understood a conversation names.
const maxUnknown = 4

// turn is a message of the conversation; for an assistant message, the
// calls it made that started and those that have a result.
type turn struct {
	msg Message
	// started and pending count, by call ID, the calls that started and
	// those without a result yet: a reply of a version that kept the IDs
	// a server gave may use one twice. A text action's ID is "".
	started  map[string]int
	pending  map[string]int
	answered int // tool messages directly after it
	// ran holds, by call ID in order, the results of the calls that ran
	// and whose message is not there yet: the run stopped between the
	// call's tool record and its message (for a text action, while the
	// screens were gathered). A resume answers with them.
	ran map[string][]ToolRecord
}

func (c *conversation) add(rec Record) {
	switch rec.Kind {
	case KindRun:
		c.run = true
		if !rec.Resumed {
			// A new run starts a new conversation and a new session (even
			// one that records no event); only resumes continue them.
			c.turns, c.reply, c.session = nil, -1, nil
			c.fresh, c.continued = true, false
		} else if !c.fresh {
			c.continued = true
		}
	case KindMessage:
		if m := rec.Message; m != nil && m.Role != RoleSystem {
			c.addMessage(*m)
		}
	case KindCall:
		if rec.Tool != nil && c.reply >= 0 {
			t := &c.turns[c.reply]
			if t.started == nil {
				t.started = map[string]int{}
			}
			t.started[rec.Tool.ID]++
		}
	case KindSession:
		for _, e := range rec.Events {
			var head struct {
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal(e, &head) == nil && head.Seq == 1 {
				// A new session's first event: the log starts again.
				c.session = nil
			}
			c.session = append(c.session, e)
		}
	case KindEnd:
		c.answer = rec.Answer
	case KindTool:
		if rec.Tool != nil && c.reply >= 0 {
			t := &c.turns[c.reply]
			if t.ran == nil {
				t.ran = map[string][]ToolRecord{}
			}
			t.ran[rec.Tool.ID] = append(t.ran[rec.Tool.ID], *rec.Tool)
		}
	case KindRender, KindModel, KindExpansion, KindError:
	default:
		// A newer version's kind, or not a transcript: named if there
		// turns out to be no run to resume.
		k := rec.Kind
		if len(k) > 40 {
			k = k[:40] + "..."
		}
		if len(c.unknown) < maxUnknown && !slices.Contains(c.unknown, strconv.Quote(k)) {
			c.unknown = append(c.unknown, strconv.Quote(k))
		}
	}
}

// addMessage appends m, or, for a tool message, places it after the tool
// messages of the reply whose call it answers: IDs are unique within a
// reply only, and a resume answers a call the stopped run left open after
// the messages that follow it.
func (c *conversation) addMessage(m Message) {
	if m.Role == RoleAssistant {
		if c.reply >= 0 {
			c.turns[c.reply].ran = nil // every call of the reply before was answered
		}
		t := turn{msg: m}
		if len(m.ToolCalls) > 0 {
			t.pending = make(map[string]int, len(m.ToolCalls))
			for _, tc := range m.ToolCalls {
				t.pending[tc.ID]++
			}
		}
		c.turns = append(c.turns, t)
		c.reply = len(c.turns) - 1
		return
	}
	if m.Role == RoleTool {
		for i := c.reply; i >= 0; i-- {
			t := &c.turns[i]
			if t.pending[m.ToolCallID] == 0 {
				continue
			}
			if t.pending[m.ToolCallID]--; t.pending[m.ToolCallID] == 0 {
				delete(t.pending, m.ToolCallID)
			}
			if ran := t.ran[m.ToolCallID]; len(ran) > 0 {
				ran[0] = ToolRecord{} // its message holds it now
				t.ran[m.ToolCallID] = ran[1:]
			}
			at := i + 1 + t.answered
			t.answered++
			c.turns = slices.Insert(c.turns, at, turn{msg: m})
			if at <= c.reply {
				c.reply++
			}
			return
		}
	}
	c.turns = append(c.turns, turn{msg: m})
}

// build reads the records of a transcript made by hand.
func (t *Transcript) build() *conversation {
	if !t.built {
		t.conv = conversation{reply: -1}
		for _, r := range t.Records {
			t.conv.add(r)
		}
		t.built = true
	}
	return &t.conv
}

// Messages returns the conversation a resume continues, without its system
// message, which a resumed run renders afresh: that of the last run that
// was not a resume, and of the resumes after it.
func (t *Transcript) Messages() []Message {
	c := t.build()
	out := make([]Message, len(c.turns))
	for i, tn := range c.turns {
		out[i] = tn.msg
	}
	return out
}

// resumed returns the conversation with every call answered, for
// [Agent.Resume]: a call with no result is answered with what is known of
// it, that it did not run or that it was running when the run stopped.
// added says which messages are such answers. A text action that was
// running is answered the same way, as an observation.
func (t *Transcript) resumed() (msgs []Message, added []bool) {
	c := t.build()
	answer := func(m Message, add bool) {
		msgs = append(msgs, m)
		added = append(added, add)
	}
	var open *turn // the last reply with calls left unanswered
	for i := range c.turns {
		tn := &c.turns[i]
		if tn.msg.Role != RoleTool && open != nil {
			answerOpen(open, answer)
			open = nil
		}
		answer(tn.msg, false)
		if len(tn.pending) > 0 {
			open = tn
		}
	}
	if open != nil {
		answerOpen(open, answer)
	}
	if n := len(c.turns); n > 0 {
		if last := c.turns[n-1]; last.msg.Role == RoleAssistant && len(last.msg.ToolCalls) == 0 && last.started[""] > 0 {
			obs := "Observation:\n" + wasRunning
			if ran := last.ran[""]; len(ran) > 0 {
				obs = observation(ran[0].Name, ran[0].Success, ran[0].Result)
			}
			answer(Message{Role: RoleUser, Content: obs}, true)
		}
	}
	return msgs, added
}

// answerOpen answers the calls of t without a result message. Calls run
// in order, so of the calls sharing an ID the first have messages, the
// next ones ran (with their tool record) or were running (with only their
// call record), and the rest did not run.
func answerOpen(t *turn, answer func(Message, bool)) {
	total := map[string]int{}
	for _, tc := range t.msg.ToolCalls {
		total[tc.ID]++
	}
	seen := map[string]int{}
	for _, tc := range t.msg.ToolCalls {
		k := seen[tc.ID]
		seen[tc.ID]++
		answered := total[tc.ID] - t.pending[tc.ID]
		if k < answered {
			continue
		}
		text := notRun
		if ran := t.ran[tc.ID]; k-answered < len(ran) {
			text = resultText(tools.Result{Success: ran[k-answered].Success, Message: ran[k-answered].Result})
		} else if k < t.started[tc.ID] {
			text = wasRunning
		}
		answer(Message{Role: RoleTool, ToolCallID: tc.ID, Content: text}, true)
	}
}

// notRun answers a tool call the run stopped before starting.
const notRun = "This call did not run: the run stopped before it. Call it again if it is still needed."

// wasRunning answers a tool call, or a text action, that had started when
// the run stopped and has no result.
const wasRunning = "This call was running when the run stopped, and its result was lost: it may have taken effect, in part or in whole. Check before calling it again."

// SessionLog returns the session events the runs saved, as the JSON lines
// session.Session.ReplayLog reads; [Agent.Resume] replays them. The log
// starts with the last run that is not a resume (or at the last
// session's first event, seq 1): two runs with fresh sessions in one file
// do not mix.
func (t *Transcript) SessionLog() string {
	var b strings.Builder
	for _, e := range t.build().session {
		b.Write(e)
		b.WriteByte('\n')
	}
	return b.String()
}

// Answer returns the last final answer the transcript holds.
func (t *Transcript) Answer() string { return t.build().answer }

package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/prompt"
)

// The kinds of transcript records, a [Record]'s Kind: [KindRun],
// [KindRender], [KindMessage], [KindModel], [KindTool], [KindExpansion],
// [KindSession], [KindError] and [KindEnd].
const (
	KindRun       = "run"       // a run started: the task, the action mode
	KindRender    = "render"    // what the model is shown changed: the report, what opened or closed, the system message when it changed
	KindMessage   = "message"   // a message joined the conversation
	KindModel     = "model"     // a model call ended: usage (with the prefix shared with the previous request), timing
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

// transcriptWriter writes records as JSON lines and keeps the first error.
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

func (t *transcriptWriter) err() error {
	if t == nil {
		return nil
	}
	return t.werr
}

// Transcript is a transcript read back.
type Transcript struct {
	Records []Record
}

// ReadTranscript reads the JSON lines a run wrote. A line that is not a
// record, or is longer than [MaxTranscriptLine], is an error naming it.
func ReadTranscript(r io.Reader) (*Transcript, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxTranscriptLine)
	tr := &Transcript{}
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("agent: read transcript: line %d: %w", line, err)
		}
		if rec.Kind == "" {
			return nil, fmt.Errorf("agent: read transcript: line %d: no kind; is this a transcript?", line)
		}
		tr.Records = append(tr.Records, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("agent: read transcript: line %d: %w", line+1, err)
	}
	return tr, nil
}

// Messages returns the conversation without its system message, which a
// resumed run renders afresh.
func (t *Transcript) Messages() []Message {
	var out []Message
	for _, r := range t.Records {
		if r.Kind == KindMessage && r.Message != nil && r.Message.Role != RoleSystem {
			out = append(out, *r.Message)
		}
	}
	return out
}

// SessionLog returns the session events the runs saved, as the JSON lines
// session.Session.ReplayLog reads; [Agent.Resume] replays them.
func (t *Transcript) SessionLog() string {
	var b strings.Builder
	for _, r := range t.Records {
		if r.Kind != KindSession {
			continue
		}
		for _, e := range r.Events {
			b.Write(e)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Answer returns the last final answer the transcript holds.
func (t *Transcript) Answer() string {
	for i := len(t.Records) - 1; i >= 0; i-- {
		if t.Records[i].Kind == KindEnd {
			return t.Records[i].Answer
		}
	}
	return ""
}

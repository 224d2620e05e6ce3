package tools

import (
	"fmt"

	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/session"
)

// EventCallFailed is the name of [CallFailed] in a saved session log.
const EventCallFailed = "tools.call_failed"

// maxFailureMessage bounds the message a [CallFailed] event keeps, in
// bytes: a failed command's output can be long, and the log keeps it.
const maxFailureMessage = 4 << 10

// CallFailed records, in the session a call was made with, that the call
// failed after its handler ran: the handler returned an error or panicked
// (or its output could not be encoded). The events the handler dispatched
// were discarded ([Tool.Call]); Discarded names their types, in the order
// they were dispatched. Message holds at most 4 KiB of what the model was
// told, followed by a note of how many bytes were left out. A session that
// replays a log holding these needs [RegisterEvents] first.
type CallFailed struct {
	Tool      string   `json:"tool"`
	Message   string   `json:"message"`
	Panicked  bool     `json:"panicked,omitempty"`
	Discarded []string `json:"discarded,omitempty"`
}

// RegisterEvents names the events [Tool.Call] dispatches ([CallFailed])
// in sess, so that a log holding them can be replayed into it
// ([session.Session.ReplayLog]). Calls name them in the session they record
// in themselves; a fresh session that replays a saved log needs this first.
func RegisterEvents(sess *session.Session) error {
	if err := session.RegisterEvent[CallFailed](sess, EventCallFailed); err != nil {
		return fmt.Errorf("tools: register events: %w", err)
	}
	return nil
}

// recordFailure dispatches a CallFailed event to sess, naming its type for
// the log first so the session can still write its log.
func recordFailure(sess *session.Session, tool, message string, panicked bool, discarded []session.Record) {
	ev := CallFailed{Tool: tool, Message: cut(message, maxFailureMessage), Panicked: panicked}
	for _, r := range discarded {
		ev.Discarded = append(ev.Discarded, r.Type)
	}
	// Both fail only when another type took the name, or the session is a
	// view whose own call has ended; the failure is the model's to read
	// either way, in the result.
	_ = RegisterEvents(sess)
	_ = sess.Dispatch(ev)
}

// cut returns s when it has at most n bytes, and otherwise its first n
// bytes or fewer, cut at a character boundary, and a note of the rest.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	kept := utf8cut.Prefix(s, n)
	return kept + fmt.Sprintf("\n[... %d more bytes]", len(s)-len(kept))
}

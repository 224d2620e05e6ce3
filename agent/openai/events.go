package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// nextEvent reads the next event of a streamed reply into v, as OpenAI's
// SDKs read them: an event without data is passed over; one whose data
// begins with [DONE], or the stream's end, ends the reply (done); one
// whose data is an object with an "error" member is the stream's error.
// With named set (chat completions), so is an event named error, as
// servers send one that fails mid-stream. The Responses API's events say
// what they are in their data, which its stream reads: one of type error
// is given to it, whatever its members, so that its code is kept.
func nextEvent(events *transport.Events, v any, named bool) (done bool, err error) {
	for {
		name, data, err := events.Next()
		switch {
		case err == io.EOF:
			return true, nil
		case err != nil:
			return false, err
		case len(data) == 0:
			continue
		case bytes.HasPrefix(data, []byte("[DONE]")):
			return true, nil
		}
		if e, ok := streamedError(data); ok && (named || !errorTyped(data)) {
			return false, streamingError(e)
		}
		if named && name == "error" {
			return false, streamingError(errorEvent(data))
		}
		return false, decode(data, v)
	}
}

// errNoMessage is a stream's error that says nothing: an error event
// with no data, {} or an empty string.
var errNoMessage = errors.New("the stream reported an error with no message")

// streamingError is a stream's error that says msg, as OpenAI's SDKs
// word it, or errNoMessage when msg says nothing.
func streamingError(msg string) error {
	switch strings.TrimSpace(msg) {
	case "", "{}", "[]", `""`:
		return errNoMessage
	}
	return fmt.Errorf("received error while streaming: %s", msg)
}

// errorEvent is what an event named error says: the message its data
// holds, read as an error status's body is ({"message": …}, {"detail":
// …}), or else its data as it came, up to 2 KiB.
func errorEvent(data []byte) string {
	if msg := (&transport.StatusError{Body: data}).API().Message; msg != "" {
		return msg
	}
	const maxQuote = 2 << 10
	if len(data) > maxQuote {
		return strings.ToValidUTF8(string(data[:maxQuote]), "") + "..."
	}
	return string(data)
}

// errorTyped reports whether an event's data is an object of type error.
func errorTyped(data []byte) bool {
	var ev struct {
		Type looseString `json:"type"`
	}
	return json.Unmarshal(data, &ev) == nil && ev.Type == "error"
}

// streamedError returns the "error" member of an event's data, if it has
// one other than null: a string's text, anything else as it came. A null
// error is none: proxies send the members they know of, null when unset.
func streamedError(data []byte) (string, bool) {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return "", false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return "", false
	}
	e, ok := fields["error"]
	if !ok {
		return "", false
	}
	var s string
	switch {
	case string(bytes.TrimSpace(e)) == "null":
		return "", false
	case json.Unmarshal(e, &s) == nil:
		return s, true
	}
	return string(e), true
}

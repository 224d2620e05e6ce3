package openai

import (
	"bytes"
	"encoding/json"
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
			return false, fmt.Errorf("received error while streaming: %s", e)
		}
		if named && name == "error" {
			return false, fmt.Errorf("received error while streaming: %s", errorEvent(data))
		}
		return false, decode(data, v)
	}
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
// one: a string's text, null as "", anything else as it came.
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
	case string(e) == "null":
		return "", true
	case json.Unmarshal(e, &s) == nil:
		return s, true
	}
	return string(e), true
}

package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// nextEvent reads the next event of a streamed reply into v, as OpenAI's
// SDKs read them: an event without data is passed over; one whose data
// begins with [DONE], or the stream's end, ends the reply (done); one
// whose data is an object with an "error" member is the stream's error.
// The event's name is not read: its data says what it is.
func nextEvent(events *transport.Events, v any) (done bool, err error) {
	for {
		_, data, err := events.Next()
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
		if e, ok := streamedError(data); ok {
			return false, fmt.Errorf("received error while streaming: %s", e)
		}
		return false, json.Unmarshal(data, v)
	}
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

package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/unfold-dev/unfold/agent/internal/transport"
)

// The fields unfold reads of a reply are decoded leniently, as OpenAI's
// SDKs decoded them: servers that follow the API send some of them as
// another JSON type (Mistral streams content as a list of parts, some
// proxies send tool arguments as an object, some ids as numbers and
// counts as strings). A value of another type reads as what it most
// likely means, or as the field's zero value, never as an error that
// would fail the whole reply. That holds for every field read, the
// objects and lists that hold the leaves too: a reply is decoded with
// decode, which reads a member of another type (a usage that is a number,
// a delta that is a string) as its zero value.

// decode reads data, a JSON object of a reply, into v leniently: a member
// whose type does not fit its field is left at its zero value, as
// encoding/json leaves it while it decodes the rest. Data that is not
// valid JSON, or not an object, is an error.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return nil
	}
	return err
}

// looseString is a string a reply sends, or the text of a number sent in
// its place; "" for anything else.
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	*s = looseString(transport.Text(b))
	return nil
}

// looseNumber is a number a reply sends (an index, a token count), or a
// string holding one; 0 for anything else.
type looseNumber float64

func (n *looseNumber) UnmarshalJSON(b []byte) error {
	*n = looseNumber(transport.Number(b))
	return nil
}

// contentText is a message's content: a string, or a list of parts (as
// Mistral's reasoning models send it), read as the text of its parts of
// type text, joined; other parts (thinking, images) are not the reply's
// text. null is ""; any other value is its JSON text.
type contentText string

func (c *contentText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var s string
	switch {
	case string(b) == "null":
		*c = ""
		return nil
	case json.Unmarshal(b, &s) == nil:
		*c = contentText(s)
		return nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(b, &parts) != nil {
		if len(b) == 0 || b[0] != '{' {
			*c = contentText(b)
			return nil
		}
		parts = []json.RawMessage{b} // one part
	}
	var out strings.Builder
	for _, raw := range parts {
		var part struct {
			Type looseString `json:"type"`
			Text looseString `json:"text"`
		}
		if json.Unmarshal(raw, &part) == nil && (part.Type == "text" || part.Type == "") {
			out.WriteString(string(part.Text))
		}
	}
	*c = contentText(out.String())
	return nil
}

// argumentsText is a tool call's arguments: the string the API sends, or
// the JSON text of any other value (an object some servers send in its
// place) as it came. null is "".
type argumentsText string

func (a *argumentsText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var s string
	switch {
	case string(b) == "null":
		*a = ""
	case json.Unmarshal(b, &s) == nil:
		*a = argumentsText(s)
	default:
		*a = argumentsText(b)
	}
	return nil
}

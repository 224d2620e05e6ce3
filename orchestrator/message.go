package orchestrator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// MaxTimeout is the longest command timeout a message may ask for, in
// seconds (one day).
const MaxTimeout = 86400

// commandMessage is a decoded command line.
type commandMessage struct {
	ID          string // the "id" field as JSON (a string or a number); "" when none
	Environment string
	Command     string
	Timeout     time.Duration // 0: none
	Hard        bool
	Quiet       time.Duration // 0: the environment's
	Budget      int           // 0: the environment's
}

// parsePrefix starts every message about a line the server cannot use (the
// protocol's "Failed to parse command: invalid JSON", docs/serve-protocol.md).
const parsePrefix = "Failed to parse command: "

const commandExample = `{"type":"command","environment":"bash","command":"ls -la"}`

// decodeMessage decodes one protocol line (without its newline). On failure
// it returns the message to send back, written for the client.
func decodeMessage(line []byte) (commandMessage, string) {
	if !utf8.Valid(line) {
		return commandMessage{}, parsePrefix + fmt.Sprintf("the line is not valid UTF-8 (first bad byte at offset %d); send UTF-8 JSON", invalidUTF8Offset(line))
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return commandMessage{}, parsePrefix + "empty line; send one JSON object per line, like " + commandExample
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return commandMessage{}, parsePrefix + "the line is a JSON " + typeErr.Value + ", not an object; send an object like " + commandExample
		}
		return commandMessage{}, parsePrefix + "invalid JSON: " + err.Error()
	}
	if fields == nil {
		return commandMessage{}, parsePrefix + "the line is JSON null, not an object; send an object like " + commandExample
	}
	if key, ok := repeatedKey(line); ok {
		return commandMessage{}, parsePrefix + fmt.Sprintf("field %q is given twice; give each field once", clip(key))
	}
	var unknown []string
	for k := range fields {
		switch k {
		case "type", "environment", "command", "timeout", "hard", "quiet", "budget", "id":
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return commandMessage{}, parsePrefix + "unknown " + plural(len(unknown), "field", "fields") + " " + quoteList(unknown) + `; a command has "type", "environment", "command" and optionally "id", "timeout", "hard", "quiet" and "budget"`
	}
	typ, present, msg := stringField(fields, "type")
	if msg != "" {
		return commandMessage{}, msg
	}
	if present && typ != "command" {
		return commandMessage{}, parsePrefix + fmt.Sprintf(`unknown message type %q; the only type is "command"`, clip(typ))
	}
	var missing []string
	if !present {
		missing = append(missing, "type")
	}
	var m commandMessage
	for _, f := range []struct {
		name string
		dst  *string
	}{{"environment", &m.Environment}, {"command", &m.Command}} {
		v, ok, msg := stringField(fields, f.name)
		if msg != "" {
			return commandMessage{}, msg
		}
		if !ok {
			missing = append(missing, f.name)
		}
		*f.dst = v
	}
	if len(missing) > 0 {
		return commandMessage{}, parsePrefix + "missing " + plural(len(missing), "field", "fields") + " " + quoteList(missing) + "; send " + commandExample
	}
	if m.Timeout, msg = secondsField(fields, "timeout"); msg != "" {
		return commandMessage{}, msg
	}
	if m.Quiet, msg = secondsField(fields, "quiet"); msg != "" {
		return commandMessage{}, msg
	}
	if raw, ok := fields["hard"]; ok {
		if !isJSONType(raw, "bool") || json.Unmarshal(raw, &m.Hard) != nil {
			return commandMessage{}, parsePrefix + `field "hard" must be true or false, got ` + jsonKind(raw)
		}
		if m.Hard && m.Timeout == 0 {
			return commandMessage{}, parsePrefix + `field "hard" needs a "timeout": the time after which the command is interrupted`
		}
	}
	if raw, ok := fields["budget"]; ok {
		var n float64
		if !isJSONType(raw, "number") || json.Unmarshal(raw, &n) != nil || n != float64(int(n)) || n < 1 || n > maxBudget {
			return commandMessage{}, parsePrefix + fmt.Sprintf(`field "budget" must be a whole number of tokens from 1 to %d, got %s`, maxBudget, clip(string(raw)))
		}
		m.Budget = int(n)
	}
	if raw, ok := fields["id"]; ok {
		if k := jsonKind(raw); k != "string" && k != "number" || len(raw) > maxID {
			return commandMessage{}, parsePrefix + fmt.Sprintf(`field "id" must be a string or a number of at most %d bytes, got %s`, maxID, clip(string(raw)))
		}
		m.ID = string(bytes.TrimSpace(raw))
	}
	return m, ""
}

// maxBudget bounds a command's token budget; maxID the length of its id.
const (
	maxBudget = 10_000_000
	maxID     = 256
)

// repeatedKey returns the first key that line, a JSON object, gives twice.
// encoding/json keeps the last one silently, where a client's library may
// keep the first: the command would go elsewhere than it believes.
func repeatedKey(line []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // the opening brace
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := tok.(string)
		if seen[key] {
			return key, true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// secondsField reads an optional field of seconds, more than 0 and at most
// MaxTimeout; 0 when it is absent.
func secondsField(fields map[string]json.RawMessage, name string) (time.Duration, string) {
	raw, ok := fields[name]
	if !ok {
		return 0, ""
	}
	var secs float64
	if !isJSONType(raw, "number") || json.Unmarshal(raw, &secs) != nil {
		return 0, parsePrefix + fmt.Sprintf(`field %q must be a number of seconds, got %s`, name, jsonKind(raw))
	}
	if !(secs > 0 && secs <= MaxTimeout) {
		return 0, parsePrefix + fmt.Sprintf(`field %q must be more than 0 and at most %d seconds, got %v`, name, MaxTimeout, secs)
	}
	return seconds(secs), ""
}

// messageID returns the "id" of a line that is a JSON object with a valid
// one, for the error line that answers it; "" otherwise.
func messageID(line []byte) string {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &v) != nil || len(v.ID) > maxID {
		return ""
	}
	if k := jsonKind(v.ID); k != "string" && k != "number" {
		return ""
	}
	return string(bytes.TrimSpace(v.ID))
}

// stringField reads a string field. present is false when the field is
// absent; msg is set when it is present with another type.
func stringField(fields map[string]json.RawMessage, name string) (v string, present bool, msg string) {
	raw, ok := fields[name]
	if !ok {
		return "", false, ""
	}
	if !isJSONType(raw, "string") || json.Unmarshal(raw, &v) != nil {
		return "", true, parsePrefix + fmt.Sprintf("field %q must be a string, got %s", name, jsonKind(raw))
	}
	return v, true, ""
}

func isJSONType(raw json.RawMessage, kind string) bool { return jsonKind(raw) == kind }

// jsonKind names the kind of a valid JSON value.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// quoteList quotes names and joins them with commas, sorted for a stable
// message; past five it says how many more there are.
func quoteList(names []string) string {
	slices.Sort(names)
	const shown = 5
	q := make([]string, 0, shown+1)
	for i, n := range names {
		if i == shown {
			q = append(q, fmt.Sprintf("and %d more", len(names)-shown))
			break
		}
		q = append(q, strconv.Quote(clip(n)))
	}
	return strings.Join(q, ", ")
}

// clip shortens a value echoed back in a message, so a huge field cannot
// make a huge error line.
func clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return utf8cut.Prefix(s, limit) + "..."
}

// responseMessage is the line sent for a command.
type responseMessage struct {
	Type     string                 `json:"type"`
	ID       rawJSON                `json:"id,omitempty"`
	Response envs.Response          `json:"response"`
	Screen   map[string]envs.Screen `json:"screen"`
}

// errorMessage is the line sent for a line the server cannot use.
type errorMessage struct {
	Type    string  `json:"type"`
	ID      rawJSON `json:"id,omitempty"`
	Message string  `json:"message"`
}

// rawJSON is a JSON value kept as its text, such as a command's id; the
// empty string is no value.
type rawJSON string

// MarshalJSON returns the text.
func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// UnmarshalJSON keeps the text.
func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = rawJSON(b)
	return nil
}

// rawID turns a message's id back into JSON.
func rawID(id string) rawJSON { return rawJSON(id) }

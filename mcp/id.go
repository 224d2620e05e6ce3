package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/unfold-dev/unfold/internal/utf8cut"
)

// maxExactID bounds the number ids answered under the id the client sent.
// The SDK reads a number id as a float64 and keeps it as an int64: a
// fraction is dropped (7.5 is answered as 7, the id of another request),
// whole numbers past 2^53 lose digits and past 2^63 all become one.
// JSON-RPC 2.0 says number ids SHOULD NOT have fractions.
const maxExactID = 1 << 53

// changedID reports whether msg, decoded from raw, is a request whose id
// is a number the SDK would answer under another id, or a cancellation
// that names one (it would cancel another request), returning that id as
// the client wrote it.
func changedID(msg jsonrpc.Message, raw []byte) (json.RawMessage, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil, false
	}
	if req.IsCall() {
		if _, isNumber := req.ID.Raw().(int64); !isNumber {
			return nil, false
		}
		if v, ok := leadingID(raw); ok && exactID(v) {
			return nil, false
		}
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		return changedField(raw, "id", &probe, &probe.ID)
	}
	if req.Method == "notifications/cancelled" {
		var probe struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		return changedField(req.Params, "requestId", &probe, &probe.RequestID)
	}
	return nil, false
}

// leadPrefix is how clients commonly begin a request, the MCP SDKs among
// them.
var leadPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// leadingID returns the id of a request raw that begins with leadPrefix,
// read where it stands: no need to decode the rest of a large call to
// find a common id exact (a key given twice may still hold another, which
// changedField looks at when this one is not exact).
func leadingID(raw []byte) (json.RawMessage, bool) {
	rest, ok := bytes.CutPrefix(raw, leadPrefix)
	if !ok {
		return nil, false
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return nil, false
	}
	return rest[:end], true
}

// changedField decodes the object obj into probe, whose field *field is
// obj's key, and reports whether that is a number that is not exact (see
// exactID). encoding/json matches keys whatever their case and the SDK
// does not, so a value that is not exact is looked up again under the
// key exactly, token by token (slower, and rare).
func changedField(obj []byte, key string, probe any, field *json.RawMessage) (json.RawMessage, bool) {
	if json.Unmarshal(obj, probe) != nil || exactID(*field) {
		return nil, false
	}
	v, ok := scanKey(obj, key)
	if !ok || exactID(v) {
		return nil, false
	}
	return v, true
}

// exactID reports whether raw, an id as written, is answered as written:
// anything but a number (a string, null, nothing), or a whole number of
// at most 2^53 written as Go writes it (no fraction, exponent or "-0").
func exactID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n >= -maxExactID && n <= maxExactID && strconv.FormatInt(n, 10) == string(raw)
}

// changedIDMessage is the error for a request refused by changedID.
func changedIDMessage(id json.RawMessage) string {
	shown := utf8cut.Prefix(string(id), maxShownID)
	if len(shown) < len(id) {
		shown += fmt.Sprintf("... (%d bytes)", len(id))
	}
	return fmt.Sprintf("invalid request: id %s is a number that is not a whole number from -2^53 to 2^53, so the answer could not carry it unchanged; give each request a string id or a whole-number one", shown)
}

// maxShownID bounds the bytes of an id quoted in an error message (the
// response's id field carries it whole).
const maxShownID = 200

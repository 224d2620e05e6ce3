package mcp

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// changedID finds the number ids the SDK would change, under the keys the
// SDK reads (matched with their case), in requests and in cancellations.
func TestChangedID(t *testing.T) {
	tests := []struct {
		line string
		want string // the id refused, "" when none
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":7.5,"method":"ping"}`, "7.5"},
		{`{"jsonrpc":"2.0","id": 1e300 ,"method":"ping"}`, "1e300"},
		{`{"jsonrpc":"2.0","id":"7.5","method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","ID":7.5,"id":7,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":7,"ID":7.5,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":7.5,"id":7,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7.5}}`, "7.5"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"RequestId":7.5,"requestId":7}}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":7.5}}`, ""},
		{`{"jsonrpc":"2.0","id":7.5,"result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":7e0,"method":"ping"}`, "7e0"},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "9007199254740993"},
		{`{"jsonrpc":"2.0","id":7}`, ""},
		{`{"jsonrpc":"2.0","id":8,"method":"ping"}`, ""},
	}
	for _, tt := range tests {
		msg, err := jsonrpc.DecodeMessage([]byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		id, changed := changedID(msg, []byte(tt.line))
		if string(id) != tt.want || changed != (tt.want != "") {
			t.Errorf("%s: got %s, %v, want %q", tt.line, id, changed, tt.want)
		}
	}
}

// TestChangedIDLeading: a request that begins as the MCP SDKs write one
// has its id read where it stands, without decoding its arguments.
func TestChangedIDLeading(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"` + strings.Repeat("x", 1<<20) + `"}}}`)
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(5, func() {
		if _, changed := changedID(msg, line); changed {
			t.Fatal("id 7 refused")
		}
	}); allocs != 0 {
		t.Errorf("%v allocations to look at the id of a 1 MiB call, want none", allocs)
	}
}

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStdioListenNeverWaits drives a stdio connection as the SDK does
// (one goroutine reads, answers are written): with the bound on calls
// full and a call waiting, a listen past the limit of open listens is
// refused at once with its own id, instead of waiting behind the call
// and, once at the head, holding back every later request.
func TestStdioListenNeverWaits(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := &StdioTransport{Reader: inR, Writer: outW, MaxInFlight: 2}
	cn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := cn.(*stdioConn)
	t.Cleanup(func() { c.Close() })
	read := make(chan *jsonrpc.Request, 64)
	go func() {
		for {
			m, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if r, ok := m.(*jsonrpc.Request); ok {
				read <- r
			}
		}
	}()
	out := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				out <- m
			}
		}
	}()
	send := func(id int, method string) {
		t.Helper()
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q}`+"\n", id, method); err != nil {
			t.Fatal(err)
		}
	}
	// The deadlines only detect a connection that stopped; they assert
	// no speed.
	handed := func(want int) {
		t.Helper()
		select {
		case r := <-read:
			if r.ID != idOf(want) {
				t.Fatalf("handed request %v on, want %d", r.ID.Raw(), want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d was not handed on in 10 s", want)
		}
	}
	written := func(id int, want string) {
		t.Helper()
		select {
		case m := <-out:
			data, _ := json.Marshal(m)
			if m["id"] != float64(id) || !strings.Contains(string(data), want) {
				t.Fatalf("wrote %s, want the answer to %d with %s", data, id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %d written in 10 s", id)
		}
	}
	answer := func(id int) {
		t.Helper()
		if err := c.Write(t.Context(), &jsonrpc.Response{ID: idOf(id), Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		written(id, `"result"`)
	}
	for id := 100; id < 100+maxListens; id++ {
		send(id, "subscriptions/listen")
		handed(id)
	}
	send(1, "tools/call")
	handed(1)
	send(2, "tools/call")
	handed(2)
	send(3, "tools/call") // waits for room
	send(200, "subscriptions/listen")
	written(200, "cancel one first")
	answer(1)
	handed(3)
	answer(2)
	answer(3)
	send(5, "ping")
	handed(5)
	send(6, "tools/call")
	handed(6)
}

// idOf is the id of a request written with the number id.
func idOf(id int) jsonrpc.ID {
	v, _ := jsonrpc.MakeID(float64(id))
	return v
}

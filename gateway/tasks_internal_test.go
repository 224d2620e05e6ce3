package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// bigEventServer answers tools/list with status, and anything else with
// an event stream of one event of 8 MiB, as a tool's large result comes.
func bigEventServer(t *testing.T, status int) *httptest.Server {
	event := fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", strings.Repeat("x", 8<<20))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "tools/list") {
			http.Error(w, "busy", status)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, event)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// post posts body through c and reads the answer to its end, returning
// the bytes allocated meanwhile.
func post(t *testing.T, c *http.Client, url, body string) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const bigCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"dump"}}`

// TestWatchPassesOtherEvents: an event stream read while no tools/list
// waits (a tool's 8 MiB result) is passed through, not kept; and a
// tools/list that failed (503) is not waited for, so it stays so.
func TestWatchPassesOtherEvents(t *testing.T) {
	hs := bigEventServer(t, http.StatusServiceUnavailable)
	c, err := httpClient("s", hs.URL, nil, &taskTools{})
	if err != nil {
		t.Fatal(err)
	}
	if got := post(t, c, hs.URL, bigCall); got > 2<<20 {
		t.Errorf("reading an 8 MiB event no list waits for allocated %d KiB, want under 2 MiB", got>>10)
	}
	post(t, c, hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if w := c.Transport.(*upstreamTransport).lists; w.waiting() {
		t.Fatalf("a tools/list answered 503 is waited for: %v", w.ids)
	}
	if got := post(t, c, hs.URL, bigCall); got > 2<<20 {
		t.Errorf("after a failed tools/list, reading an 8 MiB event allocated %d KiB, want under 2 MiB", got>>10)
	}
}

// TestWatchForgetsUnansweredJSON: a JSON body that ends without the
// answer to its tools/list forgets the request.
func TestWatchForgetsUnansweredJSON(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":99,"result":{}}`)
	}))
	t.Cleanup(hs.Close)
	c, err := httpClient("s", hs.URL, nil, &taskTools{})
	if err != nil {
		t.Fatal(err)
	}
	post(t, c, hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if w := c.Transport.(*upstreamTransport).lists; w.waiting() {
		t.Errorf("a tools/list whose JSON answer did not come is waited for: %v", w.ids)
	}
}

// TestWatchDropsOldestList: past maxLists requests without an answer,
// the oldest is forgotten, not the ones in flight.
func TestWatchDropsOldestList(t *testing.T) {
	w := &listWatch{tasks: &taskTools{}}
	id := func(n int) jsonrpc.ID {
		v, _ := jsonrpc.MakeID(float64(n))
		return v
	}
	for n := 1; n < maxLists; n++ {
		w.sent(id(n)) // never answered
	}
	w.sent(id(100))
	w.sent(id(101))
	w.received(&jsonrpc.Response{ID: id(100), Result: []byte(`{"tools":[{"name":"slow","execution":{"taskSupport":"required"}}]}`)})
	if !w.tasks.names["slow"] {
		t.Error("the answer to a list in flight went unseen: sending past the bound forgot it")
	}
	if len(w.ids) != maxLists-1 {
		t.Errorf("got %d lists waited for, want %d", len(w.ids), maxLists-1)
	}
}

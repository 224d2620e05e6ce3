package gateway

import (
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
)

// TestSameOrigin: the configured headers go to the endpoint's scheme,
// host and port, and to its host over https; not over http from https,
// nor to another host or port.
func TestSameOrigin(t *testing.T) {
	tests := []struct {
		base, to string
		want     bool
	}{
		{"https://api.example.com/mcp", "https://api.example.com/other", true},
		{"https://api.example.com/mcp", "https://API.example.com:443/mcp", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/moved", true},
		{"http://api.example.com/mcp", "https://api.example.com/mcp", true},
		{"https://api.example.com/mcp", "http://api.example.com/mcp", false},
		{"https://api.example.com/mcp", "https://api.example.com:8443/mcp", false},
		{"https://api.example.com/mcp", "https://evil.example.com/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
	}
	for _, tt := range tests {
		base, _ := url.Parse(tt.base)
		to, _ := url.Parse(tt.to)
		if got := sameOrigin(base, to); got != tt.want {
			t.Errorf("%s to %s: got %v, want %v", tt.base, tt.to, got, tt.want)
		}
	}
}

// TestBoundedBody reads a body of exactly MaxResponseBytes whole, and
// one byte more as an error naming the server.
func TestBoundedBody(t *testing.T) {
	for _, size := range []int{0, MaxResponseBytes - 1, MaxResponseBytes, MaxResponseBytes + 1, 3 * MaxResponseBytes} {
		b := &boundedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", size))), left: MaxResponseBytes, server: "web"}
		data, err := io.ReadAll(b)
		if size <= MaxResponseBytes {
			if err != nil || len(data) != size {
				t.Errorf("%d bytes: got %d bytes, %v; want them all", size, len(data), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "MCP server web answered with an HTTP body over 16 MiB") || errors.Is(err, io.EOF) {
			t.Errorf("%d bytes: got %v, want the bound named", size, err)
		}
		if len(data) != MaxResponseBytes {
			t.Errorf("%d bytes: read %d, want the %d below the bound", size, len(data), MaxResponseBytes)
		}
	}
}

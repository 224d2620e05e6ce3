package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// maxInitBytes bounds what one of unfold's own packages may allocate in
// its package initialization: room for a few small lookup tables. Every
// process pays for that work, and for the memory it touches, before it
// reads its first argument: a regular expression, a schema or a markdown
// parser a package needs belongs in a sync.OnceValue, built when first
// used.
const maxInitBytes = 8 << 10

// TestInitAllocations runs the binary with the runtime's init trace and
// checks what each of unfold's packages allocates before main.
func TestInitAllocations(t *testing.T) {
	cmd := exec.Command(binary, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("unfold --version: %v\n%s", err, stderr.String())
	}
	seen := 0
	for line := range strings.Lines(stderr.String()) {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || !strings.HasPrefix(f[1], module) || f[8] != "bytes," {
			continue
		}
		seen++
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read the bytes of %q: %v", line, err)
		}
		if n > maxInitBytes {
			t.Errorf("%s allocates %d bytes in its package initialization, more than %d: build what it needs on first use (sync.OnceValue)", f[1], n, maxInitBytes)
		}
	}
	if seen == 0 {
		t.Fatalf("no init lines for %s in the trace:\n%s", module, stderr.String())
	}
}

// TestNoModelSDK checks that the binary links no vendor SDK of a model
// API: the adapters speak the APIs over net/http themselves, and either
// SDK alone would more than double the binary (docs/design.md, "Front
// ends").
func TestNoModelSDK(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", binary).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "github.com/openai/") || strings.Contains(line, "github.com/anthropics/") {
			if n++; n <= 3 {
				t.Errorf("the binary links %s", strings.TrimSpace(line))
			}
		}
	}
	if n > 3 {
		t.Errorf("and %d more symbols of the model SDKs", n-3)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// TestModelClientsAlone checks that the binary holds the model APIs'
// services it calls, not the SDKs' whole clients: openai.NewClient and
// anthropic.NewClient make every service of their API, so linking either
// links them all (a third of the binary).
func TestModelClientsAlone(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", binary).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		switch name := f[len(f)-1]; name {
		case "github.com/openai/openai-go/v3.NewClient", "github.com/anthropics/anthropic-sdk-go/v2.NewClient":
			t.Errorf("the binary links %s: make the service the client calls alone (openai.NewChatService, responses.NewResponseService, anthropic.NewMessageService)", name)
		}
	}
}

// leanTags are the build tags that leave the model clients out.
const leanTags = "unfold_noopenai,unfold_noanthropic"

// TestLeanBuild builds unfold without the model clients and checks that
// neither SDK is linked, that the rest works as in the default build, and
// that asking for a provider left out says which build would have it.
func TestLeanBuild(t *testing.T) {
	lean := filepath.Join(t.TempDir(), "unfold")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", leanTags, "-o", lean, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", leanTags, err, out)
	}
	out, err := exec.Command("go", "tool", "nm", lean).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	sdks := 0
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "github.com/openai/") || strings.Contains(line, "github.com/anthropics/") {
			sdks++
			if sdks <= 3 {
				t.Errorf("the lean build links %s", strings.TrimSpace(line))
			}
		}
	}
	if sdks > 3 {
		t.Errorf("and %d more symbols of the model SDKs", sdks-3)
	}

	if v, err := exec.Command(lean, "version").Output(); err != nil || !strings.Contains(string(v), "tags "+leanTags) {
		t.Errorf("unfold version: %q, %v; want the line to name the tags %s", v, err, leanTags)
	}
	args := []string{"render", "--tree", "--params", "testdata/render/params.json", "testdata/render/prompt.md"}
	want, err := exec.Command(binary, args...).Output()
	if err != nil {
		t.Fatalf("unfold render (default build): %v", err)
	}
	if got, err := exec.Command(lean, args...).Output(); err != nil || string(got) != string(want) {
		t.Errorf("unfold render (lean build): %v\n%s\nwant what the default build prints:\n%s", err, got, want)
	}

	for _, tc := range []struct{ provider, tag string }{{"openai", "unfold_noopenai"}, {"anthropic", "unfold_noanthropic"}} {
		cmd := exec.Command(lean, "agent", "say hello", "--provider", tc.provider, "--base-url", "http://127.0.0.1:9/v1",
			"--model", "m", "--builtins", "none", "--project", t.TempDir())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := "built without the " + tc.provider + " client (go build -tags " + tc.tag + ")"
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("agent --provider %s in the lean build: exit %d (%v), stderr:\n%s\nwant exit 2 and %q", tc.provider, code, err, stderr.String(), want)
		}
	}
}

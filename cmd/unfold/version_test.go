package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// module is the path of the module this command belongs to.
const module = "github.com/unfold-dev/unfold"

func TestVersionFrom(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{
			"go install at a tag",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "v0.3.0"}},
			"unfold v0.3.0 (go1.26.8" + platform + ")",
		},
		{
			"go build in a checkout with changes",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "v0.0.0-20261126072517-6c3254663368+dirty"}, Settings: []debug.BuildSetting{
				{Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "6c3254663368084051f6f414e731fef24bd00f91"},
				{Key: "vcs.time", Value: "2026-11-26T07:25:17Z"},
				{Key: "vcs.modified", Value: "true"},
			}},
			"unfold v0.0.0-20261126072517-6c3254663368+dirty (commit 6c3254663368, 2026-11-26T07:25:17Z, modified; go1.26.8" + platform + ")",
		},
		{
			"go build at a tagged commit",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "v0.3.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "6c3254663368084051f6f414e731fef24bd00f91"},
				{Key: "vcs.time", Value: "2026-11-26T07:25:17Z"},
				{Key: "vcs.modified", Value: "false"},
			}},
			"unfold v0.3.0 (commit 6c3254663368, 2026-11-26T07:25:17Z; go1.26.8" + platform + ")",
		},
		{
			"a build without the model clients",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "v0.3.0"}, Settings: []debug.BuildSetting{
				{Key: "-tags", Value: "netgo,osusergo"},
			}},
			"unfold v0.3.0 (go1.26.8" + platform + "; tags netgo,osusergo)",
		},
		{
			"go run",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "(devel)"}},
			"unfold devel (commit not recorded; go1.26.8" + platform + ")",
		},
		{
			"no build information",
			nil,
			"unfold devel (commit not recorded; " + runtime.Version() + platform + ")",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionFrom(tc.info).String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// binaryVersion runs `unfold version` and `unfold --version` on the test
// binary, checks that they agree, and returns the line and the version.
func binaryVersion(t *testing.T) (line, version string) {
	t.Helper()
	var outs []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(binary, args...).Output()
		if err != nil {
			t.Fatalf("unfold %s: %v", args[0], err)
		}
		outs = append(outs, string(out))
	}
	if outs[0] != outs[1] {
		t.Errorf("unfold version printed %q, unfold --version %q; want the same", outs[0], outs[1])
	}
	line = strings.TrimSuffix(outs[0], "\n")
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "unfold" || strings.Contains(line, "\n") {
		t.Fatalf("unfold version printed %q, want one line \"unfold VERSION (...)\"", outs[0])
	}
	return line, f[1]
}

// TestVersionBinary checks what the built binary prints against what the Go
// toolchain reads from it (`go version -m`), whether or not this build
// recorded a version and a commit.
func TestVersionBinary(t *testing.T) {
	line, version := binaryVersion(t)
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "version", "-m", binary).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	wantVersion, commit := "devel", ""
	for l := range strings.Lines(string(out)) {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == module && f[2] != "(devel)":
			wantVersion = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			commit = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if version != wantVersion {
		t.Errorf("unfold version says %q, go version -m says the module is %q", version, wantVersion)
	}
	switch {
	case commit != "" && !strings.Contains(line, "commit "+commit[:12]):
		t.Errorf("unfold version printed %q, want commit %s, which go version -m reads", line, commit[:12])
	case commit == "" && !strings.Contains(line, "commit not recorded"):
		t.Errorf("unfold version printed %q; no commit was recorded, and it should say so", line)
	}
	if want := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"; !strings.HasSuffix(line, want) {
		t.Errorf("unfold version printed %q, want it to end with %q", line, want)
	}
}

// TestMCPVersion checks that `unfold mcp` tells its clients the version
// `unfold version` prints.
func TestMCPVersion(t *testing.T) {
	_, version := binaryVersion(t)
	_, cs := connectMCP(t, sdk.NewClient(&sdk.Implementation{Name: "test"}, nil), "--builtins", "none", "--project", t.TempDir())
	info := cs.InitializeResult().ServerInfo
	if info.Name != "unfold" || info.Version != version {
		t.Errorf("the server introduced itself as %q version %q, want %q version %q", info.Name, info.Version, "unfold", version)
	}
}

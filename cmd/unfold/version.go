package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

const versionHelp = `Usage: unfold version

Print the version of this unfold binary and the commit it was built from,
as the Go toolchain recorded them: a release tag for "go install
github.com/unfold-dev/unfold/cmd/unfold@v1.2.3", a pseudo-version and the
commit for "go build" in a checkout, "devel" for "go run"; then the build
tags it was built with, if any (go build -tags netgo).
"unfold --version" prints the same; "unfold mcp" reports the same version
to its clients.
`

// buildVersion describes the running binary, from the build information the
// Go toolchain records in it.
type buildVersion struct {
	Version  string // "v1.2.3", a pseudo-version for a build in a checkout, or "devel"
	Commit   string // the VCS revision, "" when not recorded
	Time     string // the commit's time, RFC 3339
	Modified bool   // the checkout had uncommitted changes
	Go       string // the toolchain, "go1.26.8"
	Tags     string // the build tags, "netgo,osusergo"; "" for none
}

// readVersion returns the running binary's version.
func readVersion() buildVersion {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionFrom(info)
}

// versionFrom reads a version out of build information; nil means the
// binary has none.
func versionFrom(info *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: "devel", Go: runtime.Version()}
	if info == nil {
		return v
	}
	if info.Main.Version != "" && info.Main.Version != "(devel)" {
		v.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		v.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "-tags":
			v.Tags = s.Value
		}
	}
	return v
}

// String is the line `unfold version` prints, like
//
//	unfold v0.3.0 (go1.26.8 linux/amd64)
//	unfold v0.0.0-20261126072517-6c3254663368+dirty (commit 6c3254663368, 2026-11-26T07:25:17Z, modified; go1.26.8 linux/amd64)
//	unfold devel (commit not recorded; go1.26.8 linux/amd64)
//	unfold v0.3.0 (go1.26.8 linux/amd64; tags netgo)
func (v buildVersion) String() string {
	var about []string
	switch {
	case v.Commit != "":
		c := "commit " + v.Commit[:min(12, len(v.Commit))]
		if v.Time != "" {
			c += ", " + v.Time
		}
		if v.Modified {
			c += ", modified"
		}
		about = append(about, c)
	case v.Version == "devel":
		about = append(about, "commit not recorded")
	}
	about = append(about, v.Go+" "+runtime.GOOS+"/"+runtime.GOARCH)
	if v.Tags != "" {
		about = append(about, "tags "+v.Tags)
	}
	return fmt.Sprintf("unfold %s (%s)", v.Version, strings.Join(about, "; "))
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprint(stdout, versionHelp)
		return 0
	case len(args) > 0:
		fmt.Fprintf(stderr, "unfold version: unexpected arguments %q; it takes none\n\n%s", args, versionHelp)
		return 2
	}
	fmt.Fprintln(stdout, readVersion())
	return 0
}

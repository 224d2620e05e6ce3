package mcp

import (
	"runtime/debug"
	"testing"
)

func TestVersionIn(t *testing.T) {
	dep := func(path, version string) *debug.Module { return &debug.Module{Path: path, Version: version} }
	replaced := dep(modulePath, "v0.1.0")
	replaced.Replace = dep("example.com/fork", "v0.1.1-fork")
	tests := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"unfold itself, released", debug.BuildInfo{Main: *dep(modulePath, "v1.2.3")}, "v1.2.3"},
		{"unfold itself, a checkout", debug.BuildInfo{Main: *dep(modulePath, "v0.0.0-20261126072517-6c3254663368+dirty")}, "v0.0.0-20261126072517-6c3254663368+dirty"},
		{"unfold itself, go run", debug.BuildInfo{Main: *dep(modulePath, "(devel)")}, "devel"},
		{"a program that imports it", debug.BuildInfo{Main: *dep("example.com/app", "v3.0.0"), Deps: []*debug.Module{dep("example.com/other", "v9.9.9"), dep(modulePath, "v1.4.0")}}, "v1.4.0"},
		{"imported and replaced", debug.BuildInfo{Main: *dep("example.com/app", "(devel)"), Deps: []*debug.Module{replaced}}, "v0.1.1-fork"},
		{"not in the build", debug.BuildInfo{Main: *dep("example.com/app", "v3.0.0")}, "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionIn(&tt.info); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

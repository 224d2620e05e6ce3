package orchestrator

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecDirSymlinks loads a process spec whose dir is given in the ways
// symlinks allow: the project opened through a symlink holds the dirs its
// real path names, and a symlink inside the project that leads out of it is
// outside.
func TestSpecDirSymlinks(t *testing.T) {
	real := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{filepath.Join(real, "env"), filepath.Join(real, "sub"), filepath.Join(outside, "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.Symlink(real, proj); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(real, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "sub"), filepath.Join(outside, "back")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, wantErr string }{
		{"sub", ""},
		{filepath.Join(real, "sub"), ""},
		{filepath.Join(proj, "sub"), ""},
		{real, ""},
		{filepath.Join(outside, "back"), ""}, // a symlink outside that leads in
		{"out", `field "dir": "out" is outside the project directory (a symlink leads it to ` + outside + `); give a directory inside it, relative to it`},
		{"out/x", `field "dir": "out/x" is outside the project directory (a symlink leads it to ` + filepath.Join(outside, "x") + `); give a directory inside it, relative to it`},
		{filepath.Join(proj, "out"), `is outside the project directory (a symlink leads it to ` + outside + `)`},
		{outside, `is outside the project directory; give a directory inside it`},
		{filepath.Join(real, "missing"), `field "dir": "` + filepath.Join(real, "missing") + `" is not a directory`},
		{filepath.Join(outside, "missing"), `is outside the project directory; give a directory inside it`},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			spec, _ := json.Marshal(map[string]any{"kind": "process", "executable": "cat", "description": "d", "dir": tt.dir})
			if err := os.WriteFile(filepath.Join(real, "env", "p.json"), spec, 0o644); err != nil {
				t.Fatal(err)
			}
			o := mustNew(t)
			defer o.Close()
			err := o.LoadSpecs(proj)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want the spec loaded", err)
				}
				return
			}
			var se *SpecError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want a *SpecError holding %q", err, tt.wantErr)
			}
		})
	}
}

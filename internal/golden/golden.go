// Package golden compares test output with files under testdata and
// rewrites them when tests run with -update. It registers that flag; tests
// that use it must not define their own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Update reports whether the run was asked to rewrite golden files.
func Update() bool { return *update }

// Check compares got with testdata/<name> (a slash-separated path), or
// writes it under -update. A difference fails the test and shows both.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to accept)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

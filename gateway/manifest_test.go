package gateway

import (
	"os"
	"strings"
	"testing"
)

// TestManifestTooBigNotCached writes a manifest past MaxManifestBytes: it
// is refused with its size, and no file, whole or half, is left.
func TestManifestTooBigNotCached(t *testing.T) {
	dir := t.TempDir()
	err := writeManifest(dir, "big", Manifest{Instructions: strings.Repeat("a", MaxManifestBytes)})
	if err == nil || !strings.Contains(err.Error(), "more than the 16777216 a cached manifest may take") {
		t.Errorf("got %v, want the size refused", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the cache holds %d files, want none", len(entries))
	}
	if err := writeManifest(dir, "small", Manifest{Instructions: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/small.json"); err != nil {
		t.Error(err)
	}
}

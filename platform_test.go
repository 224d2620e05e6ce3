package unfold_test

import (
	"os"
	"os/exec"
	"testing"
)

// TestBuildsOnMacOS builds every package for macOS, where the README says
// unfold runs (its pseudo-terminal environments aside, which must still
// build there).
func TestBuildsOnMacOS(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles every package for macOS")
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./... for darwin/arm64: %v (the README says unfold runs on macOS)\n%s", err, out)
	}
}

package unfold_test

import (
	"os"
	"os/exec"
	"testing"
)

// TestBuildsForMacOSAndLinuxARM64 builds every package for macOS and for
// Linux on arm64, where the README says unfold runs: on macOS its
// pseudo-terminal environments aside, which must still build there; on
// arm64 Linux whose system call table lacks the older calls amd64 has
// (poll, epoll_wait), which the terminal code must not name there.
func TestBuildsForMacOSAndLinuxARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles every package for other platforms")
	}
	for _, target := range []struct{ goos, goarch string }{
		{"darwin", "arm64"},
		{"linux", "arm64"},
	} {
		t.Run(target.goos+"/"+target.goarch, func(t *testing.T) {
			cmd := exec.Command("go", "build", "./...")
			cmd.Env = append(os.Environ(), "GOOS="+target.goos, "GOARCH="+target.goarch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build ./... for %s/%s: %v (the README says unfold runs there)\n%s", target.goos, target.goarch, err, out)
			}
		})
	}
}

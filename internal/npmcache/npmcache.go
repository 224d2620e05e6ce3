// Package npmcache installs the npm packages a test needs, once per
// package-lock.json, into the user's cache directory, where .ci/run
// installs them too: tests that run real MCP servers from npm share one
// install.
package npmcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// installed marks a complete install.
const installed = ".unfold-installed"

// Dir is where the packages of the package.json and package-lock.json in
// src are installed: $UNFOLD_NPM_CACHE, or the user's cache directory's
// unfold/npm, then the first 16 hex digits of the lock file's SHA-256.
// .ci/run computes the same path.
func Dir(src string) (string, error) {
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", err
	}
	base := os.Getenv("UNFOLD_NPM_CACHE")
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(cache, "unfold", "npm")
	}
	sum := sha256.Sum256(lock)
	return filepath.Join(base, hex.EncodeToString(sum[:])[:16]), nil
}

// Install installs the packages of src (a directory with package.json and
// package-lock.json) with npm ci, unless they are installed already, and
// returns the directory that holds node_modules. It skips the test when
// node or npm is missing; an install that fails fails the test. Installs
// from several test processes wait for each other.
func Install(t testing.TB, src string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the test runs MCP servers from npm", tool)
		}
	}
	dir, err := Dir(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
		return dir // another process installed them while this one waited
	}
	if err := install(src, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func install(src, dir string) error {
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, installed), nil, 0o644); err != nil {
		return errors.Join(fmt.Errorf("npmcache: mark %s installed", dir), err)
	}
	return nil
}

// Bin returns the path of an installed package's executable.
func Bin(dir, name string) string { return filepath.Join(dir, "node_modules", ".bin", name) }

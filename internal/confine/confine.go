// Package confine runs programs that may write only inside given
// directories, with Landlock, where the kernel offers it.
//
// Landlock restricts the process that asks for it, and every process it
// starts from then on; it cannot be lifted. unfold itself must stay
// unrestricted (it writes transcripts, context files and sessions where
// the user said), so the restriction is applied in a child: [Command]
// starts the running program again (/proc/self/exe) with a marker in
// argv[0] and the writable directories in the environment. This package's
// init function, which runs in that child before main, sees the marker,
// restricts the process (reading and executing stay allowed everywhere;
// writing, creating, removing, renaming and truncating only below the
// writable directories and /dev/null) and executes the real program in
// its place. A program linking this package (through the tools package)
// needs nothing else.
//
// Where the kernel offers no Landlock, [ABI] is 0 and [Command] refuses:
// the caller decides whether to run the program unconfined and says so.
package confine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

const (
	// marker is argv[0] of the child that confines itself.
	marker = "unfold-confine"
	// envDirs holds the writable directories, as a JSON array.
	envDirs = "UNFOLD_CONFINE_WRITABLE"
	// exitSetup is the child's exit status when it could not confine
	// itself or start the program; nothing ran.
	exitSetup = 126
)

func init() {
	if len(os.Args) < 2 || os.Args[0] != marker {
		return
	}
	spec, ok := os.LookupEnv(envDirs)
	if !ok {
		return
	}
	if err := confineAndExec(spec, os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "confine: %v; nothing was run\n", err)
		os.Exit(exitSetup)
	}
}

// confineAndExec restricts this process to writing below the directories
// spec lists, then replaces it with args.
func confineAndExec(spec string, args []string) error {
	var dirs []string
	if err := json.Unmarshal([]byte(spec), &dirs); err != nil {
		return fmt.Errorf("writable directories: %w", err)
	}
	if err := os.Unsetenv(envDirs); err != nil {
		return err
	}
	// Landlock binds to threads before ABI 8: keep this goroutine on the
	// thread that restricts itself and then calls execve, whatever the
	// library does for the other threads.
	runtime.LockOSThread()
	err := landlock.V3.RestrictPaths(
		landlock.RODirs("/"),
		landlock.RWDirs(dirs...).WithRefer(),
		landlock.RWFiles("/dev/null"),
	)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return syscall.Exec(args[0], args, os.Environ())
}

var abi = sync.OnceValue(func() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
})

// ABI returns the Landlock ABI version the kernel offers; 0 when it offers
// none (not Linux, an old kernel, or Landlock not enabled at boot).
func ABI() int { return abi() }

// MinABI is the Landlock ABI [Command] uses (Linux 6.2 and later): version
// 2 lets files move between writable directories, version 3 stops
// truncation outside them. Later versions add rights that are not about
// writing files (device ioctls, sockets, signals): those stay allowed.
const MinABI = 3

// ErrUnavailable is the error of [Command] on a kernel without Landlock of
// at least [MinABI].
var ErrUnavailable = errors.New("confine: the kernel offers no Landlock of ABI 3 or later (Linux 6.2)")

// Command returns a command that runs the program at path (absolute) with
// args (args[0] included), able to write only below the writable
// directories, which must exist. What it reads and runs is not limited.
// Set Dir, Env, Stdin, Stdout and Stderr on it as on any [exec.Cmd];
// Env is passed on to the program. It fails with [ErrUnavailable] where
// the kernel cannot do this.
func Command(ctx context.Context, writable []string, path string, args ...string) (*exec.Cmd, error) {
	if ABI() < MinABI {
		return nil, ErrUnavailable
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("confine: command: %s is not an absolute path", path)
	}
	dirs := make([]string, 0, len(writable))
	for _, d := range writable {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("confine: command: writable directory: %w", err)
		}
		dirs = append(dirs, real)
	}
	spec, err := json.Marshal(dirs)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = append([]string{marker, path}, args[1:]...)
	cmd.Env = append(os.Environ(), envDirs+"="+string(spec))
	return cmd, nil
}

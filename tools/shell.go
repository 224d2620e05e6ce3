package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/internal/confine"
)

// ShellName is the name of the tool NewShell returns.
const ShellName = "shell"

// Shell defaults.
const (
	DefaultShellTimeout   = 60 * time.Second
	DefaultShellMaxOutput = 64 << 10
)

// ShellPolicy says what the shell tool may run and where.
//
// Before a command runs, its text is parsed with a shell parser
// (mvdan.cc/sh) and every command the shell would run is checked:
// commands in pipelines, lists, subshells, functions, command and process
// substitution and here-documents, and the commands that env, timeout,
// nice, nohup, stdbuf, setsid, ionice, time, xargs, find -exec, flock,
// watch, busybox, exec, command and builtin run, and the text that sh -c,
// bash -c, eval and trap run, parsed in turn. Program names are compared
// after quotes and backslashes are removed (\rm and "rm" are rm), and the
// program is found as the shell would find it (on PATH, or relative to
// the directory), so /tmp/x/rm is rm and ./ls is not ls.
//
// By default every command is checked against the blocklist (ShellRules).
// With Allow set, every program and builtin must also be one of the
// listed ones: the same file, by the same name. What the check cannot see
// through is refused (rule "unchecked"): a program name, an eval text or
// a sh -c text known only when the command runs, an alias, a program that
// does not exist yet, options it does not know, setting PATH or LD_*, and
// in bash arithmetic on values that are not plain numbers. Unsafe turns
// the checks off; it must be asked for explicitly.
//
// What a program does by itself is not checked: a script file, make, git,
// an interpreter's -c or -e code, cp or mv over a file. Where the kernel
// offers Landlock (Linux 6.2 and later), the processes of the command may
// write only inside Dir, the system temporary directory and Writable,
// whatever they run; Unconfined turns that off. Commands always start in
// Dir, and a "dir" argument must stay inside it.
type ShellPolicy struct {
	Dir        string        // where commands run; "" means the current directory
	Allow      []string      // allowlist of programs and builtins; empty means blocklist only
	Unsafe     bool          // skip the blocklist and the allowlist
	DryRun     bool          // check, then report what would run instead of running it
	Timeout    time.Duration // per command; 0 means DefaultShellTimeout
	MaxOutput  int           // bytes kept of stdout and of stderr each; 0 means DefaultShellMaxOutput
	Shell      string        // the shell that runs the text with -c: sh, dash or bash; "" means /bin/sh
	Writable   []string      // more directories commands may write to (such as a build cache)
	Unconfined bool          // do not confine writes with Landlock
}

// BlockedError is a command the policy refused.
type BlockedError struct {
	Command string
	Rule    string // the rule's name, or "allowlist", or "unchecked" for what the policy cannot see through
	Reason  string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("Blocked by the shell policy (%s): %s. Nothing was run; rewrite the command without it, or ask the user to run it.", e.Rule, e.Reason)
}

// Check reports whether the policy lets command run in Dir: nil, or a
// *BlockedError naming the rule that refused it.
func (p ShellPolicy) Check(command string) error {
	dir := p.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	return p.check(command, dir)
}

// check is Check for a command that starts in dir.
func (p ShellPolicy) check(command, dir string) error {
	if strings.TrimSpace(command) == "" {
		return errors.New("Empty command: give the command text to run.")
	}
	if p.Unsafe {
		return nil
	}
	root := p.Dir
	if root == "" {
		root = dir
	}
	shell := p.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	d, ok := dialectOf(shell)
	if !ok {
		return &BlockedError{Command: command, Rule: ruleUnchecked, Reason: "the policy checks sh, dash and bash scripts, not " + shell}
	}
	err := newChecker(p, root, dir, d).script(command)
	var be *BlockedError
	if errors.As(err, &be) {
		be.Command = command
	}
	return err
}

// ShellInput is the input of the shell tool.
type ShellInput struct {
	Command string `json:"command" description:"The command line to run with sh -c."`
	Dir     string `json:"dir,omitempty" description:"Optional: a directory to run in, relative to the working directory and inside it."`
}

// ShellOutput is what a command produced: ok, the return code, stdout and
// stderr.
type ShellOutput struct {
	OK         bool   `json:"ok"`
	ReturnCode int    `json:"returncode"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	DryRun     bool   `json:"dry_run,omitempty"`
	Dir        string `json:"dir,omitempty"`
}

// String is the message the model reads.
func (o ShellOutput) String() string {
	var b strings.Builder
	if o.DryRun {
		b.WriteString(o.Stdout)
		return b.String()
	}
	fmt.Fprintf(&b, "exit status %d", o.ReturnCode)
	if o.Stdout != "" {
		b.WriteString("\nstdout:\n" + o.Stdout)
	}
	if o.Stderr != "" {
		b.WriteString("\nstderr:\n" + o.Stderr)
	}
	return b.String()
}

// NewShell returns the shell tool for policy p, named [ShellName]; a
// policy's zero timeout and output limit are [DefaultShellTimeout] and
// [DefaultShellMaxOutput], and its default blocklist is [ShellRules], each
// [ShellRule] testable with [ShellRule.Match]. It fails when p.Dir does not
// exist or is not a directory, or when the policy checks commands and
// p.Shell is not a shell it can check (sh, dash or bash).
func NewShell(p ShellPolicy) (*Tool, error) {
	dir := p.Dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("tools: new shell: working directory: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("tools: new shell: working directory %s is not a directory", dir)
	}
	p.Dir = abs
	if p.Timeout <= 0 {
		p.Timeout = DefaultShellTimeout
	}
	if p.MaxOutput <= 0 {
		p.MaxOutput = DefaultShellMaxOutput
	}
	if p.Shell == "" {
		p.Shell = "/bin/sh"
	}
	shell, err := exec.LookPath(p.Shell)
	if err == nil {
		shell, err = filepath.Abs(shell)
	}
	if err != nil {
		return nil, fmt.Errorf("tools: new shell: %w", err)
	}
	if _, ok := dialectOf(shell); !ok && !p.Unsafe {
		return nil, fmt.Errorf("tools: new shell: the policy checks sh, dash and bash scripts, not %s; use one of those, or set Unsafe", p.Shell)
	}
	p.Shell = shell
	writable, err := p.writable()
	if err != nil {
		return nil, fmt.Errorf("tools: new shell: %w", err)
	}
	return New(ShellName, p.description(writable), func(ctx context.Context, tc Context, in ShellInput) (ShellOutput, error) {
		return p.run(ctx, in, writable)
	})
}

// writable returns the directories commands may write to when Landlock
// confines them, or nil when they are not confined.
func (p ShellPolicy) writable() ([]string, error) {
	if p.Unconfined || confine.ABI() < confine.MinABI {
		return nil, nil
	}
	dirs := []string{p.Dir, os.TempDir()}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dirs = append(dirs, "/dev/shm") // POSIX shared memory and semaphores
	}
	for _, d := range p.Writable {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("writable directory %s is not a directory", d)
		}
		dirs = append(dirs, abs)
	}
	return dirs, nil
}

// description is the tool's description as the model reads it: what is
// checked, what is not, and where commands may write.
func (p ShellPolicy) description(writable []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run a command with %s -c in %s and return its exit status, stdout and stderr.", p.Shell, p.Dir)
	if p.Unsafe {
		b.WriteString(" Commands are not checked.")
	} else {
		b.WriteString(" Before it runs, the command is parsed and every command it would run is checked: in pipelines, lists, subshells, functions, $(...), <(...) and here-documents; the commands that env, timeout, nice, nohup, stdbuf, setsid, ionice, time, xargs, find -exec, flock, watch, busybox, exec, command and builtin run; and the text that sh -c, bash -c, eval and trap run.")
		b.WriteString(" Refused: removing files with rm, rmdir, shred, unlink or find -delete; sudo, su and the like; package managers and package installs; writing files with >, >>, tee or find -fprint (except to /dev/null); disk tools; shutdown; chmod and chown; kill; a shell or interpreter given no program, which would read one from its input; source; cd outside the working directory")
		if len(p.Allow) > 0 {
			fmt.Fprintf(&b, "; and any program or builtin other than these (the same file, by the same name): %s", strings.Join(p.Allow, ", "))
		}
		b.WriteString(". Also refused, because they cannot be checked: a program name, or an eval or sh -c text, computed when the command runs; aliases; a program that does not exist yet; options of the programs above that the check does not know; setting PATH, LD_* and similar variables")
		if d, _ := dialectOf(p.Shell); d == bashLike {
			b.WriteString("; arithmetic on a variable given a value that is not a plain number (bash evaluates it)")
		}
		b.WriteString(". Not checked: what a program does itself (a script file, make, git, python -c code, cp or mv over a file).")
	}
	if writable == nil {
		b.WriteString(" Writes are not confined: a command can change any file the user can.")
	} else {
		fmt.Fprintf(&b, " Commands and every program they start can write only in %s (Landlock); elsewhere writes fail with permission denied. Reading and the network are not limited.", strings.Join(writable, ", "))
	}
	return b.String()
}

// resolveDir returns the directory a command asked to run in, refusing one
// outside the working directory (symlinks included).
func (p ShellPolicy) resolveDir(rel string) (string, error) {
	if rel == "" || rel == "." {
		return p.Dir, nil
	}
	target := rel
	if !filepath.IsAbs(target) {
		target = filepath.Join(p.Dir, rel)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return "", fmt.Errorf("Directory %s does not exist inside the working directory.", rel)
	}
	r, err := filepath.Rel(p.Dir, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("Directory %s is outside the working directory %s; give a path inside it.", rel, p.Dir)
	}
	return real, nil
}

func (p ShellPolicy) run(ctx context.Context, in ShellInput, writable []string) (ShellOutput, error) {
	dir, err := p.resolveDir(in.Dir)
	if err != nil {
		return ShellOutput{}, err
	}
	if err := p.check(in.Command, dir); err != nil {
		return ShellOutput{}, err
	}
	if p.DryRun {
		return ShellOutput{OK: true, DryRun: true, Dir: dir,
			Stdout: fmt.Sprintf("Dry run: would run %q in %s. Nothing was run.", in.Command, dir)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	var cmd *exec.Cmd
	if writable != nil {
		if cmd, err = confine.Command(ctx, writable, p.Shell, p.Shell, "-c", in.Command); err != nil {
			return ShellOutput{}, fmt.Errorf("The command could not start: %v", err)
		}
	} else {
		cmd = exec.CommandContext(ctx, p.Shell, "-c", in.Command)
		cmd.Env = os.Environ()
	}
	// CDPATH would let cd go where the check did not look.
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "CDPATH=") })
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.WaitDelay = 2 * time.Second
	stdout := &capped{max: p.MaxOutput}
	stderr := &capped{max: p.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	out := ShellOutput{Stdout: stdout.String(), Stderr: stderr.String(), Dir: dir}
	var exit *exec.ExitError
	switch {
	case err == nil:
		out.OK = true
	case ctx.Err() != nil:
		out.ReturnCode = -1
		out.Stderr += fmt.Sprintf("\n[command stopped: %v]", context.Cause(ctx))
	case errors.As(err, &exit):
		out.ReturnCode = exit.ExitCode()
	default:
		return ShellOutput{}, fmt.Errorf("The command could not start: %v", err)
	}
	return out, nil
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(b []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room >= len(b) {
		c.buf.Write(b)
	} else {
		if room > 0 {
			c.buf.Write(b[:room])
		}
		c.dropped += len(b) - max(room, 0)
	}
	return len(b), nil
}

func (c *capped) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return c.buf.String() + fmt.Sprintf("\n[... %d more bytes cut]", c.dropped)
}

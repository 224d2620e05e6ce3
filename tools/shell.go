package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
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
// The default is cautious: every command is checked against the blocklist
// (ShellRules) and refused when a rule matches. With Allow set, every simple
// command in the text must also start with one of the listed programs, and
// command substitution is refused since it cannot be checked. Unsafe turns
// both checks off; it must be asked for explicitly. The working-directory
// constraint always holds: commands start in Dir, and a "dir" argument must
// stay inside it. The checks read the command text: they are a guard against
// mistakes, not a sandbox.
type ShellPolicy struct {
	Dir       string        // where commands run; "" means the current directory
	Allow     []string      // allowlist of program names; empty means blocklist only
	Unsafe    bool          // skip the blocklist and the allowlist
	DryRun    bool          // check, then report what would run instead of running it
	Timeout   time.Duration // per command; 0 means DefaultShellTimeout
	MaxOutput int           // bytes kept of stdout and of stderr each; 0 means DefaultShellMaxOutput
	Shell     string        // the shell that runs the text with -c; "" means /bin/sh
}

// ShellRule is one entry of the default blocklist.
type ShellRule struct {
	Name   string // short name, such as "rm" or "redirection"
	Reason string // what it blocks, written for the model
	match  func(cmd string) bool
}

// Match reports whether the rule blocks command.
func (r ShellRule) Match(command string) bool { return r.match(command) }

// cmdStart matches where a command word may begin: the start of the text or
// after a separator, then variable assignments, wrappers such as xargs or
// env, and a directory prefix such as /usr/bin/.
const cmdStart = `(?:^|[;&|()\x60\n{]|\$\()\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:xargs|exec|env|nohup|time|command|nice|builtin|then|do|else)\s+(?:-\S+\s+)*)*(?:\S*/)?`

func wordRule(name, reason, words string) ShellRule {
	re := regexp.MustCompile(cmdStart + `(?:` + words + `)(?:\s|$|[;&|)])`)
	return ShellRule{Name: name, Reason: reason, match: re.MatchString}
}

func reRule(name, reason, pattern string) ShellRule {
	re := regexp.MustCompile(pattern)
	return ShellRule{Name: name, Reason: reason, match: re.MatchString}
}

// harmlessRedirect lists redirections that write no file.
var harmlessRedirect = regexp.MustCompile(`[0-9]?>&[0-9]|&?[0-9]?>>?\s*/dev/null\b`)

var shellRules = []ShellRule{
	wordRule("rm", "removing files (rm, rmdir, shred, unlink) is not allowed", `rm|rmdir|shred|unlink`),
	wordRule("privilege", "running as another user (sudo, su, doas) is not allowed", `sudo|su|doas|pkexec`),
	wordRule("package-manager", "installing or removing system packages is not allowed", `apt|apt-get|aptitude|dpkg|yum|dnf|rpm|pacman|zypper|apk|brew|port|snap|flatpak|emerge`),
	reRule("package-install", "installing or removing language packages is not allowed",
		cmdStart+`(?:pip3?|python3?\s+-m\s+pip|npm|pnpm|yarn|gem|cargo|conda|go)\s+(?:install|uninstall|add|remove|get|i)(?:\s|$)`),
	{Name: "redirection", Reason: "writing files through redirection (>, >>, tee) is not allowed; print to stdout instead", match: func(cmd string) bool {
		rest := harmlessRedirect.ReplaceAllString(cmd, "")
		return strings.Contains(rest, ">") || teeRule.MatchString(cmd)
	}},
	wordRule("disk", "formatting, partitioning or mounting disks is not allowed", `dd|mkfs(?:\.\w+)?|fdisk|sfdisk|parted|wipefs|mount|umount|losetup`),
	wordRule("power", "shutting down or rebooting is not allowed", `shutdown|reboot|halt|poweroff|init|systemctl`),
	wordRule("permissions", "changing ownership or permissions is not allowed", `chmod|chown|chgrp|chattr`),
	wordRule("kill", "killing processes is not allowed", `kill|killall|pkill`),
	reRule("pipe-to-shell", "piping into a shell or interpreter is not allowed", `\|\s*(?:sudo\s+)?(?:sh|bash|zsh|dash|ksh|fish|python3?|perl|ruby|node)(?:\s|$)`),
	wordRule("eval", "evaluating generated code (eval, source) is not allowed", `eval|source|\.`),
	reRule("leave-dir", "changing to a directory outside the working directory is not allowed; use paths inside it",
		cmdStart+`(?:cd|pushd)\s+(?:/|~|\.\.(?:/|\s|$)|-(?:\s|$)|\$)`),
}

var teeRule = regexp.MustCompile(cmdStart + `tee(?:\s|$)`)

// ShellRules returns the default blocklist, in the order it is checked.
func ShellRules() []ShellRule { return append([]ShellRule(nil), shellRules...) }

// BlockedError is a command the policy refused.
type BlockedError struct {
	Command string
	Rule    string // the rule's name, or "allowlist" or "substitution"
	Reason  string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("Blocked by the shell policy (%s): %s. Nothing was run; rewrite the command without it, or ask the user to run it.", e.Rule, e.Reason)
}

// Check reports whether the policy lets command run: nil, or a
// *BlockedError naming the rule that refused it.
func (p ShellPolicy) Check(command string) error {
	if strings.TrimSpace(command) == "" {
		return errors.New("Empty command: give the command text to run.")
	}
	if p.Unsafe {
		return nil
	}
	for _, r := range shellRules {
		if r.match(command) {
			return &BlockedError{Command: command, Rule: r.Name, Reason: r.Reason}
		}
	}
	if len(p.Allow) == 0 {
		return nil
	}
	if strings.Contains(command, "$(") || strings.Contains(command, "`") || strings.Contains(command, "<(") {
		return &BlockedError{Command: command, Rule: "substitution", Reason: "command substitution cannot be checked against the allowlist"}
	}
	for _, prog := range programs(command) {
		if !contains(p.Allow, prog) {
			return &BlockedError{Command: command, Rule: "allowlist", Reason: fmt.Sprintf("%s is not on the allowlist (%s)", prog, strings.Join(p.Allow, ", "))}
		}
	}
	return nil
}

var separators = regexp.MustCompile(`\|\||&&|[;|&\n(){}]`)

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// programs returns the program name of every simple command in text.
func programs(text string) []string {
	var out []string
	for _, part := range separators.Split(text, -1) {
		for _, w := range strings.Fields(part) {
			if assignment.MatchString(w) {
				continue
			}
			out = append(out, filepath.Base(w))
			break
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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

const shellDescription = "Run a shell command and return its exit status, stdout and stderr. Commands run in the working directory; removing files, sudo, package managers, redirections and similar are blocked by policy."

// NewShell returns the shell tool for policy p. It fails when p.Dir does not
// exist or is not a directory.
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
	return New(ShellName, shellDescription, func(ctx context.Context, tc Context, in ShellInput) (ShellOutput, error) {
		return p.run(ctx, in)
	})
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

func (p ShellPolicy) run(ctx context.Context, in ShellInput) (ShellOutput, error) {
	dir, err := p.resolveDir(in.Dir)
	if err != nil {
		return ShellOutput{}, err
	}
	if err := p.Check(in.Command); err != nil {
		return ShellOutput{}, err
	}
	if p.DryRun {
		return ShellOutput{OK: true, DryRun: true, Dir: dir,
			Stdout: fmt.Sprintf("Dry run: would run %q in %s. Nothing was run.", in.Command, dir)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Shell, "-c", in.Command)
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

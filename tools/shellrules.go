package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ShellRule is one entry of the default blocklist.
type ShellRule struct {
	Name   string // short name, such as "rm" or "redirection"
	Reason string // what it blocks, written for the model
	// Programs are the program names the rule refuses, matched against
	// the name a command is run by and against the file it resolves to.
	// Rules that look at more than the name (redirection, pipe-to-shell,
	// eval, leave-dir, package-install) have none or some of them.
	Programs []string
}

// Match reports whether the rule blocks command: the command is checked
// as [ShellPolicy.Check] does with the default policy, and refused by
// this rule.
func (r ShellRule) Match(command string) bool {
	var be *BlockedError
	return errors.As(ShellPolicy{}.Check(command), &be) && be.Rule == r.Name
}

// The rules' names, for the checks that refer to them.
const (
	ruleRedirection = "redirection"
	rulePipeToShell = "pipe-to-shell"
	ruleEval        = "eval"
	ruleLeaveDir    = "leave-dir"
	rulePackage     = "package-install"
	// ruleUnchecked refuses what the policy cannot see through.
	ruleUnchecked = "unchecked"
	// ruleAllowlist refuses a program not on the allowlist.
	ruleAllowlist = "allowlist"
)

var shellRules = []ShellRule{
	{Name: "rm", Reason: "removing files (rm, rmdir, shred, unlink, find -delete) is not allowed", Programs: []string{"rm", "rmdir", "shred", "unlink"}},
	{Name: "privilege", Reason: "running as another user or as root (sudo, su, doas, pkexec, runuser, chroot) is not allowed", Programs: []string{"sudo", "su", "doas", "pkexec", "runuser", "run0", "chroot", "setpriv"}},
	{Name: "package-manager", Reason: "installing or removing system packages is not allowed", Programs: []string{"apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "rpm", "pacman", "zypper", "apk", "brew", "port", "snap", "flatpak", "emerge"}},
	{Name: rulePackage, Reason: "installing or removing language packages is not allowed"},
	{Name: ruleRedirection, Reason: "writing files through redirection (>, >>, tee, find -fprint) is not allowed; print to stdout instead", Programs: []string{"tee"}},
	{Name: "disk", Reason: "formatting, partitioning or mounting disks is not allowed", Programs: []string{"dd", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs", "mount", "umount", "losetup", "mkswap", "swapon", "swapoff"}},
	{Name: "power", Reason: "shutting down or rebooting is not allowed", Programs: []string{"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "systemctl"}},
	{Name: "permissions", Reason: "changing ownership or permissions is not allowed", Programs: []string{"chmod", "chown", "chgrp", "chattr", "setfacl"}},
	{Name: "kill", Reason: "killing processes is not allowed", Programs: []string{"kill", "killall", "pkill"}},
	{Name: rulePipeToShell, Reason: "a shell or interpreter that reads its program from its input (curl ... | sh, python3 < x) is not allowed; give the program with -c or as a file"},
	{Name: ruleEval, Reason: "running text made when the command runs (eval \"$x\", sh -c \"$x\") or a file's commands (source, .) is not allowed: the policy cannot check them"},
	{Name: ruleLeaveDir, Reason: "changing to a directory outside the working directory is not allowed; use paths inside it"},
}

// ShellRules returns the default blocklist, in the order it is checked.
func ShellRules() []ShellRule {
	out := slices.Clone(shellRules)
	for i := range out {
		out[i].Programs = slices.Clone(out[i].Programs)
	}
	return out
}

func ruleNamed(name string) ShellRule {
	i := slices.IndexFunc(shellRules, func(r ShellRule) bool { return r.Name == name })
	return shellRules[i]
}

// programRule returns the rule that refuses a program by one of its names.
func programRule(names ...string) (ShellRule, bool) {
	for _, r := range shellRules {
		for _, n := range names {
			if slices.Contains(r.Programs, n) || r.Name == "disk" && strings.HasPrefix(n, "mkfs") {
				return r, true
			}
		}
	}
	return ShellRule{}, false
}

// installers are the language package managers, and the subcommands that
// install or remove packages.
var installers = map[string][]string{
	"pip": nil, "pip3": nil, "npm": nil, "pnpm": nil, "yarn": nil, "gem": nil,
	"cargo": nil, "conda": nil, "mamba": nil, "bun": nil, "go": {"install", "get"},
}

var installVerbs = []string{"install", "uninstall", "add", "remove", "get", "i"}

var pipVersioned = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^pip3(\.\d+)?$`) })

// installs reports whether argv, run as the program called name, installs
// or removes language packages: "pip install x", "python3 -m pip install x".
func installs(name string, argv []arg) bool {
	words := operands(argv[1:])
	if isInterpreter(name) && strings.HasPrefix(name, "python") {
		i := slices.IndexFunc(argv, func(a arg) bool { return a.static && a.val == "-m" })
		if i < 0 || i+1 >= len(argv) || !argv[i+1].static || argv[i+1].val != "pip" {
			return false
		}
		words, name = operands(argv[i+2:]), "pip"
	}
	verbs, ok := installers[name]
	if !ok && !pipVersioned().MatchString(name) {
		return false
	}
	if verbs == nil {
		verbs = installVerbs
	}
	return len(words) > 0 && slices.Contains(verbs, words[0])
}

// operands returns the static words of args that are not options.
func operands(args []arg) []string {
	var out []string
	for _, a := range args {
		if a.static && !strings.HasPrefix(a.val, "-") {
			out = append(out, a.val)
		}
	}
	return out
}

// unsafeVar matches the variables a command may not set: they change which
// program a name runs (PATH, CDPATH, EXECIGNORE, BASH_CMDS, BASH_ALIASES),
// load code into programs (LD_*, DYLD_*, BASH_ENV, ENV, SHELL), run
// prompts or set shell options where the policy cannot see (PS*,
// PROMPT_COMMAND, SHELLOPTS, BASHOPTS).
var unsafeVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(PATH|CDPATH|ENV|BASH_ENV|BASH_CMDS|BASH_ALIASES|BASHOPTS|SHELLOPTS|PS[0-4]|PROMPT_COMMAND|EXECIGNORE|BASH_LOADABLES_PATH|SHELL|LD_\w*|DYLD_\w*|BASH_FUNC_.*)$`)
})

var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// setVar checks that a command may set (or unset) the variable name.
func setVar(name string) error {
	if unsafeVar().MatchString(name) {
		return unchecked("setting %s changes which programs run or what they load, which the policy cannot follow", name)
	}
	return nil
}

// program is a program a command runs, found before it runs.
type program struct {
	name string // as the command gives it: "ls", "./run.sh"
	path string // the file, absolute, symbolic links resolved
}

// resolve finds the program name runs: on pathList when it has no slash,
// else relative to dir. A program that does not exist yet, or is found
// through a relative PATH entry, cannot be checked.
func resolve(name, dir, pathList string) (program, error) {
	var found string
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := exec.LookPath(p); err != nil {
			return program{}, unchecked("%s is not an executable file now; the policy checks a program as it is before the command runs, so run it in a command of its own once it exists", name)
		}
		found = p
	} else {
		for _, d := range filepath.SplitList(pathList) {
			if d == "" || !filepath.IsAbs(d) {
				return program{}, unchecked("PATH holds the relative directory %q, so which %s runs depends on where the command is; the policy cannot tell", d, name)
			}
			if _, err := exec.LookPath(filepath.Join(d, name)); err == nil {
				found = filepath.Join(d, name)
				break
			}
		}
		if found == "" {
			return program{}, unchecked("%s was not found on PATH, so the policy cannot tell what it is", name)
		}
	}
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		return program{}, unchecked("%s: %v", name, err)
	}
	return program{name: name, path: real}, nil
}

// names returns the names a program goes by: the name it is run by and
// the name of its file.
func (p program) names() []string {
	a, b := filepath.Base(p.name), filepath.Base(p.path)
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// allowlist is ShellPolicy.Allow with each entry's program found.
type allowlist []program

// newAllowlist finds the program of each entry: a name on pathList, or a
// path. An entry that finds none matches a shell builtin of its name only.
func newAllowlist(entries []string, dir, pathList string) allowlist {
	if len(entries) == 0 {
		return nil
	}
	out := make(allowlist, 0, len(entries))
	for _, e := range entries {
		p, err := resolve(e, dir, pathList)
		if err != nil {
			p = program{name: e}
		}
		out = append(out, p)
	}
	return out
}

// program reports whether p is one of the listed programs: the same file,
// by the same name (a multi-call binary such as busybox runs what its
// name says).
func (l allowlist) program(p program) bool {
	return slices.ContainsFunc(l, func(e program) bool {
		return e.path != "" && e.path == p.path && filepath.Base(e.name) == filepath.Base(p.name)
	})
}

// builtin reports whether the shell builtin name is listed.
func (l allowlist) builtin(name string) bool {
	return slices.ContainsFunc(l, func(e program) bool { return e.name == name })
}

func (l allowlist) String() string {
	names := make([]string, len(l))
	for i, e := range l {
		names[i] = e.name
	}
	return strings.Join(names, ", ")
}

// insideDir reports whether path, made absolute against dir and with
// symbolic links resolved as far as it exists, is inside root.
func insideDir(root, dir, path string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// pathEnv is the PATH commands run with.
func pathEnv() string { return os.Getenv("PATH") }

// unchecked is a refusal of what the policy cannot see through.
func unchecked(format string, args ...any) error {
	return &BlockedError{Rule: ruleUnchecked, Reason: fmt.Sprintf(format, args...)}
}

// blocked is a refusal by the rule called name, with a detail.
func blocked(name, detail string) error {
	r := ruleNamed(name)
	reason := r.Reason
	if detail != "" {
		reason = detail + ": " + reason
	}
	return &BlockedError{Rule: r.Name, Reason: reason}
}

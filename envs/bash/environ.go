package bash

import (
	"os"
	"strings"
)

// defaultEnv holds variables that keep programs from waiting on a pager, an
// editor or a terminal that is not there, and from printing escapes.
var defaultEnv = []string{
	"TERM=dumb",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"SYSTEMD_PAGER=",
	"PSQL_PAGER=",
	"GIT_EDITOR=:",
	"GIT_MERGE_AUTOEDIT=no",
	"GIT_TERMINAL_PROMPT=0",
	"DEBIAN_FRONTEND=noninteractive",
	"PIP_NO_INPUT=1",
	"PIP_PROGRESS_BAR=off",
	"PYTHONUNBUFFERED=1",
	"PYTHON_BASIC_REPL=1",
	"NO_COLOR=1",
	"COLUMNS=200",
	"LINES=50",
}

// dropEnv names inherited variables that would change how the shell starts
// or what it prints.
var dropEnv = map[string]bool{
	"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true, "PS4": true,
	"BASH_ENV": true, "ENV": true, "HISTFILE": true, "CDPATH": true,
	"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "TMOUT": true,
}

// environ returns the shell's environment: the inherited one without
// dropEnv, then defaultEnv, then extra (later entries win).
func environ(extra []string) []string {
	seen := make(map[string]int)
	var out []string
	add := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := seen[k]; ok {
			out[i] = kv
			return
		}
		seen[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if dropEnv[k] || strings.HasPrefix(k, "BASH_FUNC_") {
			continue
		}
		add(kv)
	}
	for _, kv := range defaultEnv {
		add(kv)
	}
	for _, kv := range extra {
		add(kv)
	}
	return out
}

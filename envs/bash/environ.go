package bash

import (
	"strings"

	"github.com/unfold-dev/unfold/internal/term"
)

// dropEnv names inherited variables that would change how the shell starts
// or what it prints.
var dropEnv = map[string]bool{
	"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true, "PS4": true,
	"BASH_ENV": true, "ENV": true, "HISTFILE": true, "CDPATH": true,
	"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "TMOUT": true,
}

// environ returns the shell's environment: the inherited one without
// dropEnv and exported functions, then term.QuietEnv, then extra (later
// entries win).
func environ(extra []string) []string {
	return term.Environ(func(k string) bool { return dropEnv[k] || strings.HasPrefix(k, "BASH_FUNC_") }, extra)
}

package term

import (
	"os"
	"strings"
)

// QuietEnv holds variables that keep programs on a terminal from waiting on
// a pager, an editor or a prompt no one answers, and from printing escapes.
var QuietEnv = []string{
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

// Environ returns the environment for a program on a terminal: the
// inherited one without the variables drop names (drop may be nil), then
// [QuietEnv], then extra; a later entry for a variable replaces an earlier
// one in place.
func Environ(drop func(key string) bool, extra []string) []string {
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
		if k, _, _ := strings.Cut(kv, "="); drop == nil || !drop(k) {
			add(kv)
		}
	}
	for _, list := range [][]string{QuietEnv, extra} {
		for _, kv := range list {
			add(kv)
		}
	}
	return out
}

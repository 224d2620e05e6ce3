package bash

import (
	_ "embed"
	"strings"
)

// initScript is init.sh, which every new shell sources first: it sets up
// the end-of-command marker (its layout is described at the top of
// init.sh) and keeps the shell alive through exit and set -e. The values
// that differ from session to session, the secret in the marker's tag and
// the line that sources the command file, are not written into it: they
// are the arguments of the line that sources it ([initLine]), which the
// script reads as $1 and $2. So the file every shell runs is the one in
// the package, byte for byte, which `bash -n` checks in the tests, with
// no format verbs or escaped percent signs in its printf calls.
//
//go:embed init.sh
var initScript string

// initLine returns the line typed to source the init script at path, with
// the session's secret and the line that sources the command file as its
// arguments.
func initLine(path, secret, sourceLine string) string {
	return " . " + quote(path) + " " + quote(secret) + " " + quote(sourceLine) + "\n"
}

// guardLine is the line typed once a command has changed PS1 (the marker
// is missing, or its length field is off): it makes PROMPT_COMMAND put
// PS1 back before every prompt from now on, prints the expansions of what
// the changed prompt had before and after the marker (each between two
// copies of the secret; with $? as the command left it; copies of the
// marker left out; and left empty when they hold a command substitution,
// arithmetic or an assignment, which would run again) so that they can be
// cut from the output, and gives back the status (the argument, or $?
// when the marker is missing) and $_. It runs in a group with its
// standard error to /dev/null, and turns xtrace and verbose off, so that
// set -x shows none of it (it would show the secret).
const guardLine = "{ \\__unfold_guard %s \"$_\"&&\\: \"$_\";} 2>/dev/null\n"

// idPrefix begins the line typed for a command that sets a new id (the
// argument), which the marker then carries (see [Shell.submit]). It gives
// back $? and $_ as the last command left them, and runs in a group with
// its standard error to /dev/null, so that set -x shows none of it; its
// status, in an && list, is ignored by set -e and the ERR trap. The
// backslashes keep aliases out of it.
const idPrefix = "{ \\__unfold_id %d $? \"$_\"&&\\: \"$_\";} 2>/dev/null;"

// fixLine is the follow-up line typed after a marker that counts jobs
// without listing them, that carries a status from exit or set -e, or
// that ends a command that may have undone the shell's guards (see
// [mayUnguard]): it lists the jobs at the next prompt, puts the guards
// back when its second argument is 1 (__unfold_check in init.sh, which
// says what it put back), and gives back status (the first argument) and
// $_. It runs in a group with its standard error to /dev/null, so that
// set -x shows none of it. The backslashes keep aliases out of it.
const fixLine = "{ \\__unfold_fix %d %d \"$_\"&&\\: \"$_\";} 2>/dev/null\n"

// quote quotes s for bash as one word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

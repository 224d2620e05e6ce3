# init.sh is sourced once by every new shell, typed as
#
#	 . '<this file>' <secret> <line>
#
# where <secret> is the session's secret, which tags the end-of-command
# marker, and <line> is the line that sources the command file as the
# environment types it (". '<file>'"). It sets up the marker and keeps the
# shell alive through exit and set -e.
#
# The marker is the prompt, PS1, expanded without a fork (a $(...) would
# cost milliseconds per command) and written in one piece: a tag (0x1e and
# the secret), 0x1f, the shell's process ID ($$, so that a nested
# interactive bash that inherited PS1 through set -a cannot pass for this
# one), 0x1f, the command number (the prompt escape \#, which grows by one
# with every command the shell runs), 0x1f, the id the last line that set
# one gave (see __unfold_id below), 0x1f, the number of jobs (\j), 0x1f,
# the exit status, 0x1f, the length of PS1 (which tells a prompt that a
# command added to), 0x1f, the shell's flags ($-, which tell that set -e
# is on), 0x1f, the working directory, and the end tag (the
# tag and 0x1e). The line typed for a command is the command itself, or the
# sourcing of the command file, with nothing around it: the shell's $?
# carries over as in a terminal, and so does $_ but after the sourcing,
# which leaves the file's path there; the shell parses no more than the
# command. A marker counts only when its number is above the last one's,
# so output (an old marker in a log, say) cannot end a command early.
#
# PROMPT_COMMAND holds nothing of ours at first: even an empty one costs
# the shell several microseconds per command. Once a command has changed
# PS1 (a virtualenv's activate script does) or turned promptvars off, the
# environment types __unfold_guard (see guardLine in init.go), which
# prints the changed prompt's parts around the marker for the environment
# to cut from the output, turns promptvars on, puts PS1 back and adds
# __unfold_pcg to PROMPT_COMMAND, after any hook of the user's, to put PS1
# back before every prompt from then on. When a marker counts jobs but
# carries no list, the environment types a follow-up line, __unfold_fix
# (see fixLine in init.go), which switches PROMPT_COMMAND to the variant
# that also prints the tag, 0x1d and the output of jobs -l before the
# prompt; that variant switches back once the jobs are gone.
# __unfold_guard also turns line editing off: set -o vi and set -o emacs
# turn it on, after which a shell started with --noediting no longer
# prints its prompt for a sourced command, which is then back at its
# prompt without a marker. Nothing is spent on this for other commands.
# __unfold_fix and __unfold_guard give back the status they are given (in
# an && list, so that set -e and the ERR trap ignore it) and the last
# argument, so $? and $_ stay the command's. These switches, done by
# __unfold_setpc, replace only this shell's part of PROMPT_COMMAND (parts
# are joined by newlines): a hook the user added before or after it stays.
#
# exit and set -e would end the shell and lose its state. exit is a
# function that, in the shell itself (not in a subshell), prints why and
# sends SIGINT to the shell, which abandons the command like Ctrl-C; the
# status, the one bash's exit would give for the same arguments (found in
# a subshell, which also prints bash's complaint about a bad argument),
# goes into the next prompt in place of $?, marked with a +, for
# one prompt only, and the environment then types __unfold_fix so that $?
# is that status too (its PROMPT_COMMAND puts the plain prompt back). The
# ERR trap (inherited by functions through set -E) does the same for a
# failure under set -e and turns set -e off. set -e still on at a prompt
# (the marker carries $-) is turned off by __unfold_check, which says so:
# bash exits on an expansion error under set -e (an unset variable under
# set -u) without running the ERR trap. trap is wrapped so that a
# user's ERR trap runs after ours instead of replacing it.
#
# An answer typed to a command may be read only in part (read -n 1 takes
# one key of "yes"). The environment sends signal 41 (RTMIN+7 in glibc's
# numbering, trapped by number so that both sides agree whatever the C
# library) before it types one; the trap (__unfold_answered, run once the
# program that reads is done, or at once in the read builtin) puts
# __unfold_drain first in PROMPT_COMMAND for one prompt, which reads and
# discards what is typed and not read, so that the shell never runs it as
# a command, and prints the tag, 0x1c, the count and the end tag before
# the marker. Both run in a group with standard error to /dev/null, so
# that set -x shows nothing of them. Should the discard not run, the
# shell may run a line of the answer as a command; so the next command's
# line begins with __unfold_id (see idPrefix in init.go), which sets the
# id the marker carries, and gives back $? and $_: the environment takes
# only a marker with that id for the command's.
#
# A process group that takes the terminal from the shell and keeps it
# after the shell is back at its prompt (a program that makes itself the
# foreground from the background, or a job bash was interrupted while
# starting, which waits for bash forever) has every read of the shell's
# next line fail, which IGNOREEOF answers with a notice, over and over,
# even once that group is gone. The environment then sends signal 42
# (RTMIN+8, trapped by number as 41 is): its trap runs a subshell, a job
# of the shell's own, after which bash gives the terminal back to itself
# (and starting it releases a job left waiting).
#
# The line that sources the command file (__unfold_src) fails whenever the
# command's last part did, which then had its ERR trap already, or was
# exempt from set -e and the trap (the left side of an && list, say). At a
# terminal nothing more would happen, so the ERR trap does nothing for
# that line; as set -e would still end the shell there, it turns set -e
# off until the next prompt, whose PROMPT_COMMAND turns it on again (and
# the environment then has __unfold_check turn it off, saying so).
#
# Posix mode (set -o posix, or assigning POSIXLY_CORRECT) finds the POSIX
# special builtins, exit and trap among them, before functions. Both are
# disabled as builtins, so that the functions named for them run in posix
# mode too; they enable the builtin for the moment they run it (in a
# subshell, exit enables it and exits). So builtin exit fails; enable
# exit first to end the shell on purpose.
#
# Everything here calls bash's commands through builtin, which a function
# named builtin (or enable -n builtin) would take over: the secret would
# reach it, and exit and set -e would end the shell. __unfold_own, run
# first by each of the functions that the prompt, the traps and exit run
# in the shell itself, turns posix mode on for the moment, in which unset
# and export, special builtins, come before functions: it removes
# functions named builtin and enable, saying so, and enables builtin.
# The environment also types __unfold_fix, which runs __unfold_check,
# after a command that names builtin, enable, errtrace or +E, or that may
# run other code (source, ., eval): it does the same, and turns errtrace
# (set -E) on again, saying so, since without it a failure under set -e
# in a function would end the shell before the ERR trap could stop it.
#
# What the shell runs at its prompt runs in a group with standard error
# to /dev/null, and the functions turn xtrace and verbose off, so that set
# -x shows none of it (it would show the secret). IGNOREEOF keeps an end
# of file read at the prompt, as a terminal left with VMIN 0 by a command
# gives, from ending the shell (the environment drops the notices bash
# prints for it); the environment sets the terminal's modes back as soon
# as the command's marker comes.
builtin set +o history +H
builtin unset HISTFILE PROMPT_COMMAND MAILCHECK
PS0= PS1= PS2= IGNOREEOF=1000000000
# Given in the environment (WithEnv), they would stay exported, and the
# marker's secret with them, to every program the shell runs.
builtin export -n PS0 PS1 PS2 IGNOREEOF
__unfold_secret=$1 __unfold_src=$2
__unfold_pid=$BASHPID __unfold_uerr=
__unfold_cid=0
__unfold_ps1='\036'$__unfold_secret'\037$$\037\#\037$__unfold_cid\037\j\037$?\037${#PS1}\037$-\037$PWD\036'$__unfold_secret'\036'
__unfold_pcg='{ PS1=$__unfold_ps1; } 2>/dev/null'
__unfold_pc=
__unfold_pcj='{ PS1=$__unfold_ps1;__unfold_jobs; } 2>/dev/null'
__unfold_jq='\j'
__unfold_pco=
__unfold_pce='{ PS1=$__unfold_ps1;__unfold_own;builtin set -e;__unfold_setpc "$__unfold_pc"; } 2>/dev/null'
__unfold_own() {
	# Posix mode for the moment: unset and export come before functions.
	# Leaving posix mode sets some shell options (inherit_errexit among
	# them) as bash's own defaults for it: they are put back as they were.
	__unfold_opc=${POSIXLY_CORRECT-$'\1'} __unfold_oso=$BASHOPTS
	POSIXLY_CORRECT=y
	local f
	for f in builtin enable; do
		if export -fn "$f" 2>/dev/null; then
			unset -f "$f"
			# To standard output: the prompt's own standard error goes to /dev/null.
			builtin printf '%s\n' "[$f: the shell function named $f was removed: this persistent shell runs bash's $f command to keep its state through exit and set -e and to mark the end of each command, which the function took over. Give the function another name.]"
		fi
	done
	enable builtin
	if [[ $__unfold_opc == $'\1' ]]; then unset -v POSIXLY_CORRECT; else POSIXLY_CORRECT=$__unfold_opc; fi
	for f in inherit_errexit shift_verbose sourcepath expand_aliases; do
		if [[ :$__unfold_oso: == *:$f:* ]]; then builtin shopt -s "$f"; else builtin shopt -u "$f"; fi
	done
}
__unfold_check() {
	__unfold_own
	builtin enable -n exit trap
	if [[ $- != *E* ]]; then
		builtin set -E
		builtin printf '%s\n' "[set +E: errtrace is on again: without it a failure under set -e inside a function would end this persistent shell and lose its state (working directory, variables, background jobs).]"
	fi
	if [[ $- == *e* ]]; then
		builtin set +e
		builtin printf '%s\n' "[set -e: errexit is off again: this persistent shell does not keep it from one command to the next, since under it bash exits on an expansion error (an unset variable under set -u, \${VAR:?}) before anything can stop it, and the shell's state (working directory, variables, background jobs) would be lost. Other options (set -u, pipefail) stay on. Put set -e in the command it should stop, or in a subshell: ( set -euo pipefail; ... )]"
	fi
}
__unfold_ours() {
	local s
	for s in "$__unfold_pco" "$__unfold_pce" "$__unfold_pcj" "$__unfold_pcg"; do
		if [[ -n $s && ${PROMPT_COMMAND-} == *"$s"* ]]; then
			__unfold_seg=$s
			return 0
		fi
	done
	return 1
}
__unfold_setpc() {
	local pc=${PROMPT_COMMAND-}
	if __unfold_ours; then
		pc=${pc/"$__unfold_seg"/"$1"}
	elif [[ -n $1 ]]; then
		pc=${pc:+$pc$'\n'}$1
	fi
	if [[ $pc == *[![:space:]]* ]]; then PROMPT_COMMAND=$pc; else PROMPT_COMMAND=; fi
}
__unfold_jobs() {
	local -
	__unfold_own
	builtin set +xv
	if ((${__unfold_jq@P})); then
		builtin printf '\036%s\035' "$__unfold_secret"
		builtin jobs -l
	else
		__unfold_setpc "$__unfold_pc"
	fi
}
__unfold_fix() {
	if (($2)); then __unfold_check; fi
	__unfold_setpc "$__unfold_pcj"
	return "$1"
}
__unfold_status() { return "$1"; }
__unfold_acts() {
	[[ $1 == *'$('* || $1 == *$'\x60'* || $1 == *'$['* || $1 == *'++'* || $1 == *'--'* || $1 == *=* ]]
}
__unfold_guard() {
	__unfold_own
	# Before local -, which would turn line editing on again on return.
	# To standard output: the line's standard error goes to /dev/null.
	if [[ :$SHELLOPTS: == *:@(vi|emacs):* ]]; then
		builtin set +o vi +o emacs
		builtin printf '%s\n' "[set -o vi/emacs: line editing stays off in this shell: it is driven through a terminal by a program, and with editing on it would stop printing its prompt.]"
	fi
	local -
	builtin set +xv
	local pre=${PS1-} suf=
	builtin shopt -s promptvars
	# Bash's pattern matching takes quadratic time: a longer prompt is left
	# in the output, as is one that runs commands, counts or assigns
	# (__unfold_acts), which expanding it again would do twice.
	if ((${#pre} > 8192)); then
		pre=
	elif [[ $pre == *"$__unfold_ps1"* ]]; then
		pre=${pre%%"$__unfold_ps1"*}
		suf=${PS1:${#pre}+${#__unfold_ps1}}
		suf=${suf//"$__unfold_ps1"/}
	fi
	if __unfold_acts "$pre"; then pre=; fi
	if __unfold_acts "$suf"; then suf=; fi
	__unfold_status "$1"
	{ builtin printf '%s%s%s%s%s' "$__unfold_secret" "${pre@P}" "$__unfold_secret" "${suf@P}" "$__unfold_secret"; } 2>/dev/null
	__unfold_pc=$__unfold_pcg
	__unfold_ours || __unfold_setpc "$__unfold_pc"
	PS1=$__unfold_ps1
	return "$1"
}
__unfold_abort() {
	# __unfold_pco still names an earlier one-shot, should one be there.
	local seg="{ PS1=\${__unfold_ps1/'\$?'/+$1};__unfold_setpc \"\$__unfold_pc\"; } 2>/dev/null"
	__unfold_setpc "$seg"
	__unfold_pco=$seg
	builtin kill -INT "$__unfold_pid"
}
__unfold_err() {
	# xtrace and verbose off while it runs (not with local -, which would
	# turn set -e on again), and back on before it returns or stops the
	# command, or runs the user's ERR trap.
	local __unfold_es=$? __unfold_ex=${-//[^xv]/}
	{
		if [[ $BASHPID == "$__unfold_pid" ]]; then __unfold_own; fi
		builtin set +xv
	} 2>/dev/null
	if [[ $BASH_COMMAND == "$__unfold_src" && $BASHPID == "$__unfold_pid" ]]; then
		if [[ $- == *e* ]]; then
			builtin set +e
			__unfold_setpc "$__unfold_pce"
		fi
		if [[ -n $__unfold_ex ]]; then builtin set -"$__unfold_ex"; fi
		return "$__unfold_es"
	fi
	if [[ $BASH_COMMAND =~ ^(builtin|command)[[:space:]]+exit([[:space:]]|$) ]]; then
		# exit is disabled as a builtin, so builtin exit and command exit
		# fail: they meant to exit, and the command must not go on.
		# The status is the one bash's exit would give for the argument,
		# when that is a number or a variable ($rc, "${rc}"); else 1.
		__unfold_es=1
		local __unfold_re='^[a-z]+[[:space:]]+exit[[:space:]]+(-?[0-9]+|"?[$][{]?([A-Za-z_][A-Za-z0-9_]*)[}]?"?)[[:space:]]*$' __unfold_v
		if [[ $BASH_COMMAND =~ $__unfold_re ]]; then
			__unfold_v=${BASH_REMATCH[1]}
			if [[ -n ${BASH_REMATCH[2]} ]]; then
				__unfold_v=${BASH_REMATCH[2]}
				__unfold_v=${!__unfold_v-}
			fi
			if ( builtin enable exit; builtin exit "$__unfold_v" ) 2>/dev/null; then __unfold_es=0; else __unfold_es=$?; fi
		fi
		if [[ -n $__unfold_ex ]]; then builtin set -"$__unfold_ex"; fi
		exit "$__unfold_es"
	fi
	if [[ $BASHPID == "$__unfold_pid" && $- == *e* ]]; then
		builtin set +e
		builtin printf '%s\n' "[set -e: stopped at a failing command (status $__unfold_es): $BASH_COMMAND. In this persistent shell set -e would exit the shell and lose its state, so the command was stopped instead and set -e is off again. To stop at the first failure, use a subshell: ( set -e; ... )]" >&2
		{
			if [[ -n $__unfold_ex ]]; then builtin set -"$__unfold_ex"; fi
			__unfold_abort "$__unfold_es"
		} 2>/dev/null
	fi
	if [[ -n $__unfold_ex ]]; then builtin set -"$__unfold_ex"; fi
	if [[ -n $__unfold_uerr ]]; then builtin eval "$__unfold_uerr"; fi
}
__unfold_pcd='{ __unfold_drain; } 2>/dev/null'
__unfold_id() { __unfold_cid=$1; return "$2"; }
__unfold_answered() {
	if [[ ${PROMPT_COMMAND-} != *"$__unfold_pcd"* ]]; then
		PROMPT_COMMAND=$__unfold_pcd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}
	fi
}
__unfold_drain() {
	local - LC_ALL=C x n=0
	__unfold_own
	builtin set +xv
	PROMPT_COMMAND=${PROMPT_COMMAND/"$__unfold_pcd"/}
	PROMPT_COMMAND=${PROMPT_COMMAND#$'\n'}
	if [[ -z $PROMPT_COMMAND ]]; then builtin unset PROMPT_COMMAND; fi
	while builtin read -t 0; do
		x=
		IFS= builtin read -r -N 4096 -t 0.01 x || :
		n=$((n + ${#x}))
		if [[ -z $x ]]; then break; fi
	done
	{ builtin printf '\036%s\034%d\036%s\036' "$__unfold_secret" "$n" "$__unfold_secret"; } 2>/dev/null
}
builtin trap '{ __unfold_answered; } 2>/dev/null' 41
builtin trap '{ ( : ); } 2>/dev/null' 42
builtin trap __unfold_err ERR
builtin set -E
exit() {
	# local - puts xtrace and verbose back as the command stops.
	local - s=$?
	if [[ $BASHPID != "$__unfold_pid" ]]; then
		# A subshell: posix mode finds exit, enabled again, before this
		# function, and unset before a function named enable.
		POSIXLY_CORRECT=y
		unset -f enable
		enable exit
		if (($#)); then exit "$@"; fi
		exit "$s"
	fi
	{
		__unfold_own
		builtin set +xv
	} 2>/dev/null
	# The status bash's exit would give, and its complaint about a bad
	# argument, from a subshell; in a condition, so that neither set -e
	# nor an ERR trap sees it.
	if (( $# )); then
		if ( builtin enable exit; builtin exit "$@" ); then s=0; else s=$?; fi
	fi
	builtin printf '%s\n' "[exit: the shell stays open: exiting would end this persistent shell and lose its state (working directory, variables, background jobs). The command stopped here with status $s.]" >&2
	__unfold_abort "$s"
}
trap() {
	if (( $# >= 2 )) && [[ $1 != -[lpP] ]]; then
		if [[ $1 == -- ]]; then shift; fi
		local a=$1 s rest=()
		shift
		for s in "$@"; do
			if [[ ${s^^} == ERR || ${s^^} == SIGERR ]]; then
				if [[ $a == - ]]; then __unfold_uerr=; else __unfold_uerr=$a; fi
			else
				rest+=("$s")
			fi
		done
		if (( ${#rest[@]} == 0 )); then return 0; fi
		builtin set -- -- "$a" "${rest[@]}"
	fi
	if [[ $BASHPID == "$__unfold_pid" ]]; then { __unfold_own; } 2>/dev/null; fi
	builtin enable trap
	builtin trap "$@"
	local s=$?
	builtin enable -n trap
	return "$s"
}
builtin enable -n exit trap
builtin shopt -s promptvars
PS1=$__unfold_ps1

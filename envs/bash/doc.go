// Package bash is a persistent bash environment: one `bash --norc
// --noprofile` on a pseudo-terminal per [Shell], whose working directory,
// exported variables, functions, aliases and background jobs carry over
// from command to command.
//
//	sh, err := bash.New(bash.WithDir(projectDir))
//	if err != nil {
//		return err
//	}
//	defer sh.Close()
//	resp, err := sh.Execute(ctx, "go test ./...")
//
// # Commands
//
// A command is any bash text, several lines included: heredocs, functions,
// if and for blocks, line continuations. It is written to a private file
// and sourced, so nothing is echoed and no continuation prompt appears; a
// plain one-line command (no quotes, $, operators or compound keywords) is
// typed directly instead, which saves the shell reading a file. The
// response is stdout and stderr together, turned into plain text: escape
// sequences removed, carriage returns and backspaces applied (a progress
// bar keeps its last state), invalid UTF-8 replaced. Output over the limit
// ([WithOutputLimit], 10 MB by default) keeps its head and tail in memory
// and the whole in a spool file ([envs.Spool]); the response names the
// file the output is saved in (at most [WithSaveLimit] bytes of it, head
// and tail, 64 MiB by default). Memory stays bounded however much a
// command prints. Success is exit status 0.
//
// # Completion
//
// The end of a command is the prompt, a marker carrying a tag secret to
// the session, the shell's process ID, the command's number (which grows
// with every command), the exit status, the working directory and, when
// there are jobs, the job list. A marker counts only when its number is
// above the last one's, so output cannot forge it: an old marker replayed
// from a log is not the end, and is dropped from the output, as is a
// prompt the shell repeats. $? carries over from command to command as in
// a terminal, and so does $_ after a command typed as it is (one simple
// command); after a command run from the command file, $_ is that file's
// path. Bash's messages about the command file ("bash: <file>: line 2:
// syntax error ...") name the command instead, as bash -c's do ("bash:
// line 1: ..."), with the line within the command; a saved whole output
// ([WithSave]) keeps them as printed. The defaults TERM=dumb, PAGER=cat, GIT_PAGER=cat
// and the like keep programs from waiting on a pager or printing escapes.
//
// The marker, and the functions that keep exit and set -e from ending the
// shell (see Faults), come from init.sh, a bash script embedded in the
// package that every new shell sources first; the session's secret and
// the line that sources its command file are the script's arguments, so
// the script is the same file for every shell.
//
// # Speed
//
// A command such as true takes one write and one read of the terminal:
// the reply is read in the calling goroutine, which waits in the kernel
// (ppoll) rather than on the runtime's poller, and the shell runs no
// PROMPT_COMMAND of its own. For the first [WithSpin] after typing a
// command ([DefaultSpin], 100µs, where the process may use more than one
// processor) the goroutine busy-waits instead, looking at the terminal
// without blocking, so that a quick command's marker finds it running
// rather than asleep: on an idle two-processor machine that took a
// quarter to a third off the round trip of true, for up to that much
// processor time per command that takes longer; with every processor
// busy it gains nothing.
//
// A command that changes PS1 (a virtualenv's activate script, say) or turns
// promptvars off is seen from the marker's length field, or, when no marker
// comes, from the kernel: the shell is back in the read(2) that takes its
// command lines, told from the read builtin's by its buffer and count
// (learnt when the shell starts), with nothing typed waiting. The shell
// then puts PS1 back, cuts what the changed prompt printed from the end of
// the output (expanded again with the command's $?; a clock in it may have
// ticked over, so digits may differ), and from then on puts PS1 back before
// every prompt, which costs every later command a few microseconds. A
// changed prompt that runs commands, counts or assigns ($(...), backquotes,
// $[...], ++, =) is not expanded again, so its text stays in that one
// command's output, as does a prompt over 8 KB and one that output from
// elsewhere followed at once; one that never finishes expanding keeps the
// shell from answering, which then ends it at the command's timeout. A
// shell that does not take PS1 back is ended, and the next command starts a
// new one. Where /proc/<pid>/syscall cannot be read, PS1 is put back before
// every prompt from the start. The job list costs a follow-up line only
// when jobs appear; the shell then lists them at every prompt while there
// are any.
//
// # Limits, cancellation and input
//
// A call gives control back while the command runs on (the response has
// Running set, and the next command continues it; see
// [envs.LimitedExecutor]) when the command's output has not changed for
// [WithQuiet] (30 s by default) or when [WithTimeout] (2 minutes by
// default) or the caller's limit passes, and as soon as the command waits
// for input. Between calls the terminal is read into the command's output,
// which the next call returns. The next command continues it: an empty
// command waits again, [envs.Interrupt] interrupts it, [envs.EndOfInput]
// types Ctrl-D, and other text is typed to it, with a newline, when it
// reads the terminal (otherwise the text is refused: typed ahead, the
// shell would run it after the command).
//
// When ctx is done (a hard limit), the command is interrupted: Ctrl-C's
// SIGINT; a command that ignores it gets SIGTERM and then SIGKILL on its
// process group; the shell and its state stay. A program that handles
// Ctrl-C and goes back to reading the terminal, printing as it does (a
// REPL such as python3, sqlite3 or node back at its prompt, a nested
// shell whose program the signal ended), is left there, as in a
// terminal: the response says it handled Ctrl-C and waits for input
// again, with its prompt, and the REPL keeps its state. A second C-c in a
// row, with nothing typed between, goes on to SIGTERM, so that a program
// that only redraws its prompt (less) is ended in the end; the response
// says it went back to its prompt again, so that C-c sent SIGTERM. A job that
// reads keys with the terminal's signals off (raw mode: node's REPL, an
// editor) is typed ^C instead of signalled, as a terminal would. The SIGINT goes straight to
// the job that holds the terminal (each new job of a loop gets it too),
// or, when the shell itself has held the terminal for 50 ms (a loop of
// builtins, the wait builtin), to the shell. Ctrl-C is typed only while
// the shell waits to read the terminal (the command's line not read yet,
// the read builtin): typed at other times it would often meet bash between
// forking a program and waiting for it, and bash interrupted there loses
// track of the program and then hangs or exits. Input typed and not read
// yet is discarded, as Ctrl-C discards it.
//
// A command that stops to read the terminal (read, a y/n question, a
// password prompt, a line editor such as a nested interactive shell's, an
// event loop such as node's readline or Python's prompt_toolkit) is seen
// from the kernel's state: the foreground process, or one of its group
// among the shell's descendants, blocked reading the terminal (in read,
// or in poll or epoll with the terminal among what it waits to read; see
// internal/term), with the output still. A wait in poll or epoll counts
// only when the output ends in an unfinished line, as a question leaves
// it: a program that forwards the terminal as it works (script, ssh,
// docker run -it), or node after it read an answer (libuv keeps the
// terminal in its epoll set), watches it too while it prints whole lines,
// and text typed then would answer a later question unseen. The looks back off from 10 ms to a second as the
// command runs on, so a command watched for minutes costs next to no
// processor time. The response quotes the question (the last line of the
// output) and says whether it asks for a secret (its words ask for one, or
// the program turned the terminal's echo off, as read -s does); answers
// are typed with the terminal's echo off, so none appears in the output.
// An answer with a line over 4,095 bytes to a program that reads the
// terminal a line at a time (canonical mode) is not typed: the line
// discipline would drop its end. The response says so and the program
// still waits.
//
// What a program leaves of an answer (read -n 1 takes one key of "yes")
// is never run as a command. Before typing an answer the environment
// sends the shell a signal (41, RTMIN+7 in glibc's numbering) whose trap
// has the shell, at its next prompt and before its marker, discard what
// is typed and not read; the response then says "N bytes of the answer
// were not read by the program and were discarded" (set -x shows none of
// it). Should the discard not run (the trap reset, or PROMPT_COMMAND
// replaced after the trap ran), the next command waits up to 200 ms for
// the shell to be back at its prompt and discards what still waits in the
// terminal; a line the shell read before that runs as a command, and its
// output comes before the next command's, in that command's response. It
// cannot end that command early: the next command's line first sets a new
// id (keeping $? and $_), which the marker carries, and only a marker with
// that id ends the command, so each response holds its own command's
// output.
//
// Line editing stays off: a shell started without it stops printing its
// prompt when a sourced command turns it on, so after set -o vi or set -o
// emacs the shell, found back at its prompt without its marker, is given
// the line that puts PS1 back, which turns line editing off again; the
// response says so.
//
// Output is returned as printed: the newline that ends the last line goes,
// blank lines before it stay. Past the token budget ([WithBudget], 8,000
// by default) or the output limit the response keeps the head and the tail
// and the whole output is saved ([WithSave]; see [envs.Spool.Fit]).
//
// # Faults
//
// exit, and a failure under set -e, would end an interactive shell; here
// they stop the command and say why, and the shell stays, in posix mode
// too (exit and trap are disabled as builtins, so that the functions that
// guard them run first; builtin exit fails, and stops the command with
// the status it names in a number or a set variable, as exit does; enable
// exit first to end the shell). set -e is not kept from one command to
// the next: still on at the prompt (set -euo pipefail given a command of
// its own, say), it is turned off, and the response says so, since under
// it bash exits on an expansion error (an unset variable under set -u,
// ${VAR:?}) before any trap can stop the command, which would lose the
// shell's state; set -u and pipefail stay on. Such an error in the
// command that turned set -e on still ends the shell: the response names
// that likely cause, and the next command starts a new shell as below.
// A function named builtin or enable is
// removed, and builtin
// enabled again, as soon as the shell's own code runs, or the command
// that named it ends, and the response says so; errtrace turned off (set
// +E) is turned on again after the command, saying so: without it a
// failure under set -e in a function ends the shell, which the response
// then says, as it does when set +E and such a failure come in one
// command. Under set -x nothing of the shell's prompt code shows (it
// holds the marker's secret), and of exit and the ERR trap only the few
// lines before they turn tracing off, each time they run (a failure in a
// function runs the ERR trap there and again where the function was
// called), never the secret (unless BASH_XTRACEFD sends the trace elsewhere than
// standard error: then the prompt code shows too). A command that leaves
// the terminal's modes changed (stty -icanon min 0, with which the shell
// would read an end of file at its prompt) has them set back as soon as
// its marker comes, and IGNOREEOF keeps the shell alive meanwhile. A
// process group that holds the terminal while the shell waits for its next
// line (a program that made itself the foreground from the background, or
// a job bash was interrupted while starting) has the shell read an end of
// file over and over: the shell is signalled (42, RTMIN+8) to take the
// terminal back, between commands and before one is typed. Signals 41 and
// 42 are the environment's: a command that traps or resets them turns
// these off. C-c to
// the shell's own read where ^C typed does nothing (stty -isig, another
// interrupt character) sends it SIGINT instead. When the shell ends
// anyway (enable exit; builtin exit, killed from outside, or it no longer
// answers after a timeout), or a command leaves it unable to go on (exec
// >/dev/null sends its output away, ulimit -n 3 keeps it from opening its
// command file: looked at after commands that say exec or ulimit), the
// shell is ended, the response says why, and the next command starts a
// new shell in the last working directory and says that the rest of the
// state was lost. [Shell.Close] ends every process the shell started,
// background jobs and processes that left its session (setsid, daemons)
// included: a hangup, then SIGTERM, then SIGKILL, to its session and to
// its group (a cgroup, or its descendants and the processes carrying its
// mark; see internal/procs). [WithResources] sets resource limits on the
// shell, which its commands inherit. Programs that run shells for a long
// time in a container whose PID 1 does not reap should call
// [BecomeSubreaper].
//
// # Screen
//
// The screen:
//
//	Working directory: /home/user/project
//	Last exit code: 0
//	Background jobs: [1] 12345 ./server
//	Running: make test (for 45s)
//
//	Any bash command. Use & for background jobs.
//
// The jobs line is left out when there are none, the running line when no
// command runs on (with a line for its question when it waits for input). The summary is
// "Bash shell (ready)". The package needs Linux: it reads the terminal's
// state from /proc.
package bash

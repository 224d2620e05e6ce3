// Package python is a persistent Python environment: one python3 process
// per environment, running a small driver that unfold embeds, with one
// namespace that lives across commands.
//
// # Commands
//
// A command is a block of Python code. The driver parses it with ast, runs
// all of it in the namespace and, like the interactive interpreter, shows
// the repr of a final expression statement (nothing for None). Output of
// the code and of anything it starts (os.system, subprocess) is captured at
// the file-descriptor level: fds 1 and 2 share one pipe, so stdout and
// stderr arrive in the order they were written. The output reads as a
// terminal would show it, as bash's does (see internal/term): escape
// sequences are dropped, and carriage returns and backspaces are applied,
// so a progress bar (tqdm, pip) comes back as its final state, not as
// every frame it drew. An exception shows its full traceback with the
// lines of the code (cells are named <cell-N>) and none of the driver's
// frames; a SyntaxError points at its line. Code that leaves fd 1 or 2
// closed or sent elsewhere (os.dup2 of /dev/null, left in place when a
// library raised) gets it put back as it ends, before its traceback is
// shown, and the response says so, so later output is not lost; so does
// code that leaves in the place of sys.stdout or sys.stderr what surely
// does not write to them (None, a StringIO, a file of another
// descriptor; a tee or a wrapper stays), and code that closes or detaches
// either, which gets a new one on the same descriptor:
//
//	r, err := python.New(python.WithDir(project))
//	...
//	resp, err := r.Execute(ctx, "import math\nr = 2\nmath.pi * r ** 2")
//	// resp.Output == "12.566370614359172", resp.Success == true
//
// Commands and replies travel between Go and the driver on their own file
// descriptors (3 and 4) as JSON lines, so nothing the code prints, not even
// bytes that are not UTF-8, can be mistaken for a reply. The end of a
// command's output is found with a random marker the Go side writes into
// the output pipe after the reply: code never sees it, so cannot forge it.
//
// # Limits, input and interrupts
//
// A call gives control back while the code runs on (Running set; see
// [envs.LimitedExecutor]) when its output has not changed for
// [WithQuiet] (30 s by default), when [WithTimeout] (2 minutes) or the
// caller's limit passes, and as soon as it waits for input: input(),
// getpass.getpass() (a secret) and sys.stdin ask the next command for the
// line, which goes to the code; [envs.EndOfInput] raises EOFError there.
// sys.stdin reads in pieces as on a terminal (read(n) takes the rest of a
// line before asking for the next, and so does input(); sys.stdin.buffer
// reads bytes); what a cell leaves unread is dropped as it ends, and a
// sys.stdin the cell closed is replaced by a new one, with a note.
// Subprocesses read /dev/null, and so do processes forked by
// multiprocessing, which close sys.stdin. Output over the token budget ([WithBudget],
// 8,000 by default) or the output limit keeps its head and tail, and is
// saved whole ([WithSave]; see [envs.Spool.Fit]).
//
// When the command's context ends (a hard limit), or [envs.Interrupt]
// comes, the interpreter's process group gets SIGINT, as Ctrl-C in a
// terminal would: KeyboardInterrupt is raised in the code, its traceback
// is shown, the response says it was interrupted, and the namespace
// survives. pdb (breakpoint(), pdb.set_trace(), pdb.pm()) answers like
// input(); stepping past the end of the cell ends the debugger there, and
// the driver's frames are skipped. Code that does not stop within [WithGrace] is killed with its
// process group and a fresh interpreter is started; the response says the
// variables were lost. exit(), quit() and sys.exit() raise SystemExit,
// which is reported and does not end the session. If the interpreter dies
// (os._exit, a crash, a kill from outside), the next command starts a new
// one and says the state was lost.
//
// # Notebook lines
//
// As in a notebook, a line `!command` runs command in a shell (its output
// is the cell's), and `%pip install PKG` runs pip with the environment's
// own interpreter (sys.executable), so packages land where the code
// imports them. Such lines are only looked for when the cell is not valid
// Python as it is, and only where a statement starts (Python's tokenizer
// tells a line inside a string or brackets, which stays as written).
//
// # Stale replies
//
// Every request carries a random id, and every reply the id and the
// driver's process ID. A process the code forks closes its copies of the
// protocol's descriptors and exits where its copy of the cell ends, so it
// never answers; the reply notes the fork. Code that closes or replaces
// descriptors 3 or 4, or the copies of fds 1 and 2 the driver keeps to
// put them back, is seen when the cell ends, and the driver stops;
// a line on descriptor 4 that is not the driver's answer to the running
// command (written by the code) stops the interpreter. Either way the
// response says the state was lost, and a fresh interpreter answers the
// next command: no reply ever belongs to another command.
//
// # Screen
//
// The screen follows the help-system design from the first turn:
//
//	Working directory: /home/user/project
//
//	Variables (recent):
//	  df: DataFrame
//	  model: RandomForestClassifier
//
//	Any Python code. Variables and imports persist across commands.
//
// Variables are listed most recently mentioned first: after each command,
// names it mentions as whole words (a \b<name>\b match, so comments and
// strings count too) move to the front. Names starting with _, modules and
// builtins are left out, and at most [MaxVariables] are shown; with none,
// the list reads "Variables: (none)". A class shows its own name, anything
// else its type's name. The one-line summary is "Python REPL (ready)".
//
// # Resources
//
// Output is kept in memory head and tail up to [WithOutputLimit], and whole
// past it in a spool file ([envs.Spool]), saved for the response up to
// [WithSaveLimit]; the Go side drains the pipe while
// the code runs, so neither side holds more. Output that arrives between
// commands (a thread, a process the code started) comes with the next
// response, marked as such, within 8 KB, head and tail (the whole of it
// saved like a command's output past the limit), so that it cannot push
// the command's own output out of the response. The interpreter starts with the first command.
// Close ends it and its process group: end of input, then SIGTERM, then
// SIGKILL; then whatever it started that left its process group (see
// internal/procs). On Linux the kernel kills the interpreter should the
// program die without closing it (a parent-death signal): having no
// terminal, it would get no hangup. [WithResources] sets resource limits
// on it.
package python

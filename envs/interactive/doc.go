// Package interactive drives any prompt-driven program (sqlite3, psql, gdb,
// python3 -i) on a pseudo-terminal from a command line, a prompt regular
// expression and a description (docs/design.md, Environments).
//
//	db, err := interactive.New(interactive.Spec{
//		Command:     "sqlite3 data.db",
//		Prompt:      `sqlite> `,
//		Description: "SQLite database shell",
//	})
//
// # Commands
//
// The program starts with the first command (and [Spec.Init] commands
// after it). Its start is part of that command, under the same limits: a
// soft limit gives control back while it starts on (the command is typed
// once its prompt shows, on a later empty command), and a hard limit,
// cancellation or [envs.Interrupt] stops it; [Spec.StartTimeout] bounds
// the start on its own. Each command is typed at the prompt; the response is the
// output up to the next prompt, as plain text, without the program's echo
// of the input and without the prompts printed between its lines. A
// command is done when the prompt ends the output, the program has read
// all the input, it printed a prompt for every line typed (a program given
// several lines prints one after each; with fewer, as when the last line
// still runs, the output must be still for longer) and the output has
// been still for a moment. A command of several lines, or one ending with
// a newline, that ends at the continuation prompt ([Spec.Continuation])
// gets a blank line typed after it, which ends a block in Python's REPL.
// A command that still ends there, or a single line without a newline
// (the start of a block), is reported as incomplete, and the next
// command continues it. What the program prints
// between commands (a timer's or a thread's output) comes in front of the
// next command's response, under "[Output since the last command:]",
// within 8 KiB, head and tail; when the program then exits, the next
// command's response says how it ended and what it printed before, and
// the command runs in the program started again.
//
// # Limits, input and exits
//
// A call gives control back while the command runs on (Running set; see
// [envs.LimitedExecutor]) when no prompt came and the output has not
// changed for [Spec.Quiet], or [Spec.Timeout] or the caller's limit
// passed, and as soon as the program waits to read the terminal away from
// its prompt (a question of its own): the next command is then its answer,
// hidden as a secret when the question asks for one or the program turned
// the terminal's echo off.
// When the context is done (a hard limit; [Spec.Hard] makes Timeout one),
// or [envs.Interrupt] comes, the program gets Ctrl-C, and the response
// says which ("Command timed out (no prompt detected)" for a hard limit,
// "Interrupted (C-c)" for the key). If the prompt comes back the
// program keeps its state, and so it does when the program reads its
// terminal again away from the prompt (at a question, or at a prompt the
// spec does not match: one changed by .prompt or sys.ps1, which the
// response hints at); otherwise it is stopped and starts again with
// the next command, which says the state was lost. A program that exits
// (.quit, quit) is reported, and the next command starts it again. Close
// ends what it started, processes that left its session included, and so
// does the next start after the program exited or was stopped;
// [Spec.Resources] sets resource limits on it.
//
// # What is typed
//
// A command is at most [MaxCommand] bytes, and so is an answer. A program
// that reads its terminal in canonical mode (Python's input() without
// readline, and other programs without a line editor) gets at most 4,095
// bytes of a line: the kernel's line discipline drops the rest without a
// word. A longer line to such a program is refused, with what to do, and
// nothing is typed. A terminal holds only about 20 KB its program has not
// read: the rest of a long command is typed as the program reads it, while
// the call's limits run, and a response that comes back before then says
// how much is typed; Ctrl-C (a hard limit, cancellation, [envs.Interrupt])
// stops the typing and drops what the program has not read, saying so; line editors (readline, as in sqlite3) read in raw
// mode and get lines of any length. A line editor takes a typed tab for
// its completion key: a line holding a tab is typed to it as a bracketed
// paste, which it reads as text, when it reads one (it turned bracketed
// paste on, or it is GNU readline); to another program the tab is typed
// as it is. A command or an answer holding a character the terminal would
// take for a key is refused, and nothing is typed: to a line editor (raw
// mode) every control character but newline and tab (Ctrl-C, Ctrl-D, ESC,
// DEL); to a program in canonical mode the keys its line discipline has
// set and enabled (interrupt, end of input, erase, erase line…, read from
// the terminal as the text is typed), while ESC, Ctrl-A and the others
// are text it gets. [envs.Interrupt] and [envs.EndOfInput] are the keys. The question of a command that waits
// is its last line, clipped to its last [envs.MaxQuestion] characters,
// and a character whose bytes a soft limit split is shown whole in the
// next response.
//
// # Screen
//
// The screen shows the description, the program's status (not started,
// running, stopped) and how commands are used; the summary is the
// description. The package needs Linux.
package interactive

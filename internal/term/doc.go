// Package term holds what the environments share about terminals: turning
// terminal output into plain text (bash, interactive, python, process
// environments, the repl), and running
// a program on a pseudo-terminal (bash, interactive).
//
// # Output
//
// A [Filter] turns what programs write to a terminal into plain text for
// an agent to read: escape sequences dropped, carriage returns and
// backspaces applied, so a progress bar keeps only its final state.
// Sequences end where a terminal ends them, and a title or link whose
// end was lost hides at most the rest of its line (or [MaxString] bytes),
// not the rest of the output.
//
//	f := term.NewFilter(w)
//	f.Write(chunk) // finished lines go to w
//	f.Flush()      // and the unfinished one
//
// [Plain] does the same to a whole string (a process environment's reply,
// a screen).
//
// # Pseudo-terminals
//
// [OpenPTY] opens a terminal whose master works with the runtime poller
// (Close ends a pending Read; read deadlines work) and whose modes are
// set by [FixModes]: no echo, no output processing, canonical input,
// signals. [Start] runs a command as a session leader on the slave.
//
//	master, slave, err := term.OpenPTY()
//	cmd := exec.Command("sqlite3")
//	err = term.Start(cmd, slave)
//
// [OpenDirect] opens one whose master is read with a [Reader] in the
// calling goroutine instead: it waits in the kernel for output, a deadline
// or [Reader.Wake], so a quick reply wakes the reader directly, with no
// hand-off through the runtime's poller.
//
//	master, r, slave, err := term.OpenDirect()
//	n, err := r.Read(buf, time.Now().Add(time.Second)) // 0, nil: look again
//
// [Foreground], [TerminalReader] and [InputQueued] tell from the kernel's
// state what the program is doing: which process group owns the terminal,
// whether one of its processes waits to read it, and how surely
// ([Wait]): surely when blocked in read or in a line editor's pselect,
// maybe when in an event loop's poll or epoll wait with the terminal among
// what it watches for input (a program that forwards the terminal, as
// script and ssh do, waits so as it works); how much typed input is
// unread. [WaitExited] learns that a child ended without reaping it.
// [SignalGroup] and [EndSession] stop programs: a process group, or a
// whole session with the signal ladder hangup, SIGTERM, SIGKILL.
// These need Linux ([Supported]); elsewhere they return [ErrUnsupported].
package term

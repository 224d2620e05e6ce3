package bash

import (
	"context"
	"syscall"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/term"
)

// How long each step of interrupting a command may take before the next.
const (
	interruptGrace = time.Second
	signalGrace    = time.Second
)

// Interrupting a job (see [Shell.interruptJob]): how long a shell that
// holds the terminal has before it is signalled, how often the foreground
// is looked at (first, and at most, once it stays the same), how soon a
// job just started may get the signal again, and how long a signal to the
// shell gets before the next.
const (
	forkWait       = 50 * time.Millisecond
	forkPoll       = 500 * time.Microsecond
	forkPollMax    = 8 * time.Millisecond
	forkAgain      = 10 * time.Millisecond
	maxResend      = 4
	interruptRetry = 300 * time.Millisecond
)

// interrupt stops the running command; why says what prompted it, hint
// what to do instead (or ""). The ladder: SIGINT, as Ctrl-C sends it, to
// the job in the foreground (see [Shell.interruptJob]); SIGTERM to the
// foreground process group; SIGKILL to it; and when the shell itself still
// does not answer, the shell is ended. A job that handles Ctrl-C and goes
// back to reading the terminal (a REPL, a nested shell) ends the ladder
// there: the response says it waits for input again, with its prompt; but
// not when it did so at the last Ctrl-C and nothing was typed to it since
// (a pager that redraws its prompt, a program that never ends on Ctrl-C):
// a second Ctrl-C in a row goes on to SIGTERM, so that Ctrl-C always gets
// out in the end.
func (s *Shell) interrupt(p *proc, j *job, why, hint string) outcome {
	state := " The shell and its state (working directory, variables, background jobs) are kept." + hint + "]"
	p.stream.repeatEnds()
	repeats := p.stream.repeated()
	again := j.handled
	j.handled = false
	o, sig, ok := s.interruptJob(p, time.Now().Add(interruptGrace), !again)
	if ok {
		if sig.waits {
			j.handled = true
			o.waiting = s.question(p, j)
			o.note = why + " Interrupted it with Ctrl-C: the program handled it and waits for input again; it and its state are kept. " +
				"Send " + envs.Interrupt + " again, with nothing typed between, to end it (SIGTERM).]"
			return o
		}
		if !o.died {
			// The shell may end on reading its next line yet.
			o = s.fixModes(p, o)
		}
		switch {
		case o.died:
			o.note = why + "]\n" + o.note
		case sig.signalled:
			o.shellSignalled = sig.shell
			if sig.shell && o.fr != nil && o.fr.status != 130 {
				// The command ended by itself as the interrupt went out,
				// which then met the prompt: the shell answers it with a
				// prompt of its own, and would drop the first key typed
				// before that.
				p.awaitRepeat(repeats, repeatWait)
			}
			o.note = why + " Interrupted it with Ctrl-C." + state
		}
		// Otherwise the command ended by itself before anything was
		// sent: its outcome stands.
		return o
	}
	termNote, killNote := " It ignored Ctrl-C, so its process group was sent SIGTERM and it ended.",
		" It ignored Ctrl-C and SIGTERM, so its process group was killed (SIGKILL)."
	if sig.reprompt {
		// A REPL or a pager at its prompt: it handled this Ctrl-C as it
		// did the one before.
		again := " It handled Ctrl-C and went back to its prompt again, so this second " + envs.Interrupt + " sent SIGTERM to its process group"
		termNote, killNote = again+" and it ended.", again+"; it ignored that, so the group was killed (SIGKILL)."
	}
	if pg, err := term.Foreground(p.master); err == nil && pg > 1 && pg != p.pid {
		term.SignalGroup(pg, syscall.SIGTERM)
		if o, ok := s.settle(p, signalGrace); ok {
			o.note = why + termNote + state
			return o
		}
		term.SignalGroup(pg, syscall.SIGKILL)
		if o, ok := s.settle(p, signalGrace); ok {
			o.note = why + killNote + state
			return o
		}
	}
	_ = p.stop()
	return outcome{died: true, note: why + " The shell itself did not answer Ctrl-C or signals to the command, so it was ended; " + s.lostState() + hint + "]"}
}

// interruptJob sends the SIGINT that Ctrl-C would to the command's
// foreground job until the command ends or until end, and reports how it
// ended, what was signalled, and whether it ended. It does not catch the
// shell between forking a job and waiting for it, as Ctrl-C typed at a loop
// that runs program after program often does: bash interrupted there loses
// track of the job it just started, and then either hangs or exits on
// reading a terminal the job holds. It looks at the terminal's foreground
// process group, every forkPoll at first:
//   - A job that holds the terminal gets the signal directly (Ctrl-C typed
//     would be acted on a little later, by when the job may have ended and
//     the shell forked the next one), after what was typed to the terminal
//     and not read yet is discarded, as Ctrl-C discards it. Each job gets it
//     once, and a loop that goes on to its next job (the last one had
//     ended, or was just forked and took the signal as the shell would,
//     exiting instead of dying of it) gets it again. A job that ran the
//     shell's program when signalled (not exec'd yet, or a subshell) may
//     have taken the signal as the shell, early, before its own handling
//     was in place: it gets it again after forkAgain, doubled each time,
//     up to maxResend times, as long as it ran the shell's program at the
//     last one (on a busy machine a subshell ignored two within 10 ms).
//   - A job that reads the terminal with its signals off (raw mode, as
//     node's REPL and editors read keys) is typed ^C instead, which is
//     what Ctrl-C is to it in a terminal.
//   - A job that reads the terminal again after a job was signalled, with
//     output since the signal and none for pollConfirm, handled Ctrl-C and
//     is back at its prompt (a REPL, or a nested shell whose program the
//     signal ended): it gets no signal, and, with mayWait, interruptJob
//     reports it waits (j.waits), as Ctrl-C typed would leave it.
//   - A shell that holds the terminal and waits for its next line (or for
//     the read builtin's) gets Ctrl-C typed, which also discards the
//     command's line when the shell has not read it yet; or, when ^C
//     would not interrupt (the command turned the terminal's signals off
//     or chose another interrupt character), and again every
//     interruptRetry, SIGINT after the input is discarded; but not once a
//     job was seen (the shell is then back at its prompt, its marker on
//     the way), and not at its prompt with nothing typed waiting (the
//     command ended without a marker; [Shell.ended] tells).
//   - A shell that holds the terminal otherwise may be starting a job; when
//     it keeps the terminal for forkWait (a loop of builtins, the wait
//     builtin, a command substitution, the read builtin after a job), it
//     gets the signal itself, again every interruptRetry.
func (s *Shell) interruptJob(p *proc, end time.Time, mayWait bool) (o outcome, j jobSignals, ended bool) {
	var (
		last    = -1      // the foreground group at the last look
		since   time.Time // when it became the foreground
		sent    = -1      // the job last signalled
		sentAt  time.Time // when
		asShell bool      // it ran the shell's program just before
		resent  int       // the times it got the signal again
		shellAt time.Time // when the shell last got the signal
		jobSeen bool      // a job held the terminal at some look
		poll    = forkPoll
		sentOut int64 // the output's total when a job was first signalled
		readAt  int64 // the output's total when a job was seen reading, or -1
	)
	readAt = -1
	// Every signal comes after the input not read yet is discarded.
	sigint := func(pg int) {
		_ = term.FlushInput(p.tty)
		term.SignalGroup(pg, syscall.SIGINT)
	}
	for time.Now().Before(end) {
		pg, err := term.Foreground(p.master)
		now := time.Now()
		if err != nil || pg <= 1 {
			pg = p.pid // unknown: treat the terminal as the shell's
		}
		if pg != last {
			last, since, poll = pg, now, forkPoll
		}
		jobSeen = jobSeen || pg != p.pid
		shellDue := shellAt.IsZero() || now.Sub(shellAt) >= interruptRetry
		reads := false
		if pg != p.pid && sent > 0 {
			total := p.stream.outputTotal()
			reads = p.asks(pg) && total != sentOut && p.inputRead()
			switch {
			case !reads:
				readAt = -1
			case readAt == total && mayWait:
				j.waits = true
				return outcome{}, j, true
			case readAt == total:
				// Back at its prompt after a Ctrl-C before: ended by
				// the ladder.
				j.reprompt = true
				return outcome{}, j, false
			default:
				readAt, poll = total, pollConfirm
			}
		}
		switch {
		case reads:
			// Back at its prompt, it seems: confirmed at the next look.
		case pg != p.pid:
			// A job just forked runs the shell's program until it execs
			// (a subshell never does), and early on takes the signal as
			// the shell would, which need not end it: such a job gets it
			// again (see above).
			again := pg == sent && resent < maxResend && now.Sub(sentAt) >= forkAgain<<resent && asShell
			if pg != sent || again {
				// What the job ran when signalled, not what it runs now:
				// one that took the signal as the shell and then exec'd
				// a program (sleep, say) runs on unsignalled.
				asShell = p.exe != "" && term.Executable(pg) == p.exe
				_, rd := term.ReadingTerminalUnder(p.pid, pg, p.tty)
				if rd {
					// A job that reads the terminal is no job just
					// forked: its handling is in place (a nested shell
					// at its prompt), and the signal is not sent again.
					asShell = false
				}
				if rd && pg != sent && !term.InterruptKey(p.master) {
					// It reads keys with the terminal's signals off (raw
					// mode: node's REPL, an editor): Ctrl-C is a key to
					// it, typed as a terminal would.
					_, _ = p.master.Write([]byte{3})
				} else {
					sigint(pg)
				}
				if pg == sent {
					resent++
				} else {
					resent = 0
				}
				if sent <= 0 {
					sentOut = p.stream.outputTotal()
				}
				sent, sentAt, j.signalled = pg, now, true
			}
		case !shellDue:
		case p.atPrompt():
			// Back at its prompt without a marker (a Ctrl-C would only
			// lose the command's status), or about to read the command's
			// line: settle tells which.
		case !jobSeen && term.ReadsTerminal(p.pid, p.tty):
			if shellAt.IsZero() && term.InterruptKey(p.master) {
				_, _ = p.master.Write([]byte{3})
			} else {
				// ^C typed would not interrupt (signals off, another
				// interrupt character), or did not: the signal itself.
				sigint(p.pid)
			}
			shellAt, j.signalled, j.shell = now, true, true
		case now.Sub(since) >= forkWait:
			sigint(p.pid)
			shellAt, j.signalled, j.shell = now, true, true
		}
		if o, ok := s.settle(p, min(poll, time.Until(end))); ok {
			return o, j, true
		}
		if readAt < 0 {
			poll = min(2*poll, forkPollMax)
		}
	}
	return outcome{}, j, false
}

// jobSignals says what [Shell.interruptJob] signalled.
type jobSignals struct {
	signalled bool // anything: a job or the shell
	shell     bool // the shell itself, which may have been at its prompt
	waits     bool // a job handled the signal and reads the terminal again
	reprompt  bool // so did one that had done so at the Ctrl-C before
}

// repeatWait bounds the wait for the prompt a Ctrl-C that met the prompt
// makes the shell write again.
const repeatWait = 100 * time.Millisecond

// settle waits up to d for the command's marker or the shell's end, and
// then sees whether the command ended without a marker ([Shell.ended]).
func (s *Shell) settle(p *proc, d time.Duration) (outcome, bool) {
	fr, ev := p.next(context.Background(), time.Now().Add(d))
	switch ev {
	case evFrame:
		return outcome{fr: &fr}, true
	case evExited:
		return s.died(p), true
	}
	return s.ended(p)
}

// Package envs defines the environment contract: what a persistent
// environment (a shell, a REPL, an editor, a declarative command set) offers
// to an agent through the orchestrator.
//
// # The contract
//
// An [Env] executes one command text under a context and returns a
// [Response] (output plus success), and renders a [Screen] (content plus the
// number of lines to show). A command that fails is a Response with Success
// false; an error means the environment itself broke. Cancelling the context
// interrupts the running command, not the environment. Screen may be called
// while a command runs and must not wait for it. Optional abilities are
// optional interfaces: [Closer] for environments holding resources,
// [Summarizer] for a one-line description shown when the environment's prompt
// section is summarized, [Hinter] for what its commands do to the world
// (read only, destructive, idempotent, open world).
//
// Package envtest checks an implementation against this contract.
//
// # Control comes back
//
// No command holds its caller for long. A [LimitedExecutor] gives control
// back at the soft [Limits] (its output unchanged for Quiet, 30 s by
// default; Until passed, 2 min by default), and as soon as the command
// waits for input, with the output so far and [Response.Running] set; the
// command runs on, and the next command continues it: empty waits and
// returns the new output, [Interrupt] ("C-c") interrupts it, [EndOfInput]
// ("C-d") ends its input, other text is typed to it when it waits for
// input ([Response.Waiting], the question in [Response.Prompt], a secret
// marked [Response.Hidden]) and refused otherwise. The context's deadline
// is a hard limit: it interrupts the command. Commands take their turn in
// arrival order ([Queue]), each until its own deadline ([NotRun]).
// [Background] gives an environment that is only an [Env] the same
// contract, showing its output when a command ends.
//
// Every response fits a token budget ([DefaultBudget]): [Limits.Fit]
// keeps the head and tail of a longer output, says how much was left out,
// and saves the whole output ([Limits.Save], [SaveTemp]), naming the file
// in [Response.OutputFile].
//
// # Output past memory
//
// An environment collects a command's output in an [Output]: head and
// tail in memory up to its limit ([DefaultOutputLimit], 10 MB). An Output
// made by a [Spool] keeps the whole output too: once the limit is passed
// it writes what it holds and everything after, in order, to a file of
// the spool, in a directory of its own under the system's temporary
// directory (made at the first such command: a quick command makes no
// file). [Spool.Fit], which such an environment calls instead of
// [Limits.Fit], puts the bytes the Output left out back in their place in
// the saved file, so the file the response names holds the whole output
// (as valid UTF-8, as responses show output), and removes the spool file.
// Spool.Close removes what is left, with the directory. The spool files of
// an environment take at most [DefaultSpoolLimit] (1 GB) together; past
// it, the saved file and the response say how much is missing and why.
// A saved file holds at most [Limits.SaveLimit] bytes ([DefaultSaveLimit],
// 64 MiB): of a longer middle, its head and tail, with a line marking what
// is left out, and the response says so; the front ends keep the saved
// files of a project within [DefaultSaveTotal] (256 MiB) together, the
// oldest removed first. Fit copies only what it saves and counts only
// what the response shows, so the work it does after a command's time
// limit is bounded by the save limit and the memory limit, not by how
// much the command printed.
//
// # Declarative environments
//
// [Declarative] builds an environment from [Command] values: a signature
// whose first word is the command's name, a description, an optional example
// and a [Handler]:
//
//	timer, err := envs.NewDeclarative("timer", sess, envs.DeclarativeSpec{
//		Description: "Timer for tracking elapsed time",
//		Commands: []envs.Command{
//			{Signature: "start", Description: "Start the timer from zero or resume after stop.", Example: "start", Handler: start},
//			{Signature: "stop", Description: "Stop the timer and record elapsed time.", Example: "stop", Handler: stop},
//		},
//		State: func() string { return "Timer: Stopped (0.00s)" },
//	})
//
// Execute routes a command text by its first word; the handler receives the
// rest (see [Handler]). Its responses:
//
//   - an unknown name: "Unknown command: <name>\nAvailable: <sorted names>";
//   - empty text: "Empty command: ...\nAvailable: <sorted names>";
//   - a handler error or panic: "Error: <message>", success false; a
//     [*Failure] (from [Fail]) is shown as it is, for recovery help;
//   - otherwise the handler's output, success true.
//
// # Help screens
//
// The screen is the state display (State, or the description), a blank
// line, "Commands:", then one entry per command in declaration order:
//
//   - not used yet and with an example: the signature, the description
//     indented four spaces, "Example:" and the example fenced with
//     ```<environment name>, indented six;
//   - used, or without an example: "<signature> - <summary>", where the
//     summary defaults to the description's first line without its period.
//
// A blank line separates a long entry from its neighbours. Consecutive short
// entries stay together when they are of the same kind (used, or without an
// example) and are separated by a blank line otherwise, as the screens of the
// help-system design show.
//
// # Usage in the session
//
// A command's first use is a [CommandUsed] event dispatched to the
// environment's session; its reducer keeps a [Usage] per environment in
// [UsageSlice]. The help screen reads it, so restoring a session snapshot or
// replaying a log restores which help is long. Several environments may
// share one session: usage is keyed by environment name.
//
// # Writing an environment
//
// The built-in environments share these pieces, and an environment of
// one's own gives the same answers with them: [IsInterrupt] and
// [IsEndOfInput] recognize the key commands; [NewBackground] runs an
// environment whose commands block in the background, so that control
// comes back at the limits; [SecretPrompt] tells a question for a secret;
// [IdleNote], [NotReadingNote] and [EndedNote] are the notes of a key or
// text that found nothing to act on; [TrimOutput], [LastLine], [Abbrev] and
// [Round] shape output, a command and a duration for a response or a
// screen.
//
// # Concurrency
//
// A Declarative runs one handler at a time. Screen does not wait for a
// running handler: it calls State concurrently with it, so State and the
// handlers must guard the state they share with their own mutex, held
// briefly. A handler that ignores cancellation is abandoned after a short
// grace period: Execute returns an "Interrupted" failure and the next
// command waits for the handler to finish.
package envs

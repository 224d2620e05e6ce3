// Package envtest is a conformance suite for implementations of [envs.Env].
//
// Call [Run] from a test of your environment with a factory that returns a
// fresh environment, a trivial command in its syntax and options naming
// more:
//
//	func TestConformance(t *testing.T) {
//		envtest.Run(t, func(t *testing.T) envs.Env {
//			env, err := bash.New(bash.WithDir(t.TempDir()))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return env
//		}, "true", envtest.WithBlocking("sleep 600"),
//			envtest.WithPhased(func(first, file, second string) string {
//				return fmt.Sprintf("echo %s; while [ ! -e %s ]; do sleep 0.05; done; echo %s", first, file, second)
//			}))
//	}
//
// Each check runs as a subtest on its own environment, so one failure does
// not cascade. Every call into the environment is bounded by
// [WithTimeout]: an environment that hangs fails the check instead of
// hanging the test, and a panic is reported as a failure.
//
// # Checks
//
//   - Screen: Screen answers without error and MaxLines is not negative; a
//     [envs.Summarizer]'s summary is one non-empty line.
//   - Trivial: the trivial command succeeds, twice.
//   - ConcurrentScreen: Screen answers from several goroutines while the
//     blocking command runs (or, without one, while trivial commands run).
//   - Cancel: cancelling the context, or its deadline, makes the blocking
//     command return a failed response; an already cancelled context too;
//     the environment still works afterwards.
//   - CloseTwice: Close may be called twice ([envs.Closer] only).
//   - ExecuteAfterClose: a command after Close fails with an error wrapping
//     [envs.ErrClosed] (errors.Is), and Screen neither panics nor hangs
//     ([envs.Closer] only).
//   - HugeCommand: a 1 MB command, one line or many, gets a response and the
//     environment still works.
//   - EmptyCommand: empty and blank commands get a response and the
//     environment still works.
//
// The checks of the soft limits ([envs.LimitedExecutor]) need commands
// named by options, and are skipped without them; an environment that is
// not a LimitedExecutor runs them through [envs.Background], as the
// orchestrator runs it:
//
//   - SoftLimit ([WithPhased]): a command still running at its quiet limit,
//     or at its time limit, gives control back with Running set and the
//     output so far; [envs.Interrupt] then interrupts it.
//   - DefaultLimit ([WithPhased], [WithDefaultQuiet]): with no deadline
//     and no limits, control comes back at the environment's own quiet
//     limit.
//   - Continue ([WithPhased]): empty commands return only the output new
//     since the last response, until the command ends with its status.
//   - Refused ([WithPhased]): text sent while the command runs and does not
//     wait for input is refused, and never used.
//   - Input ([WithQuestion]): a command that waits for input comes back
//     with Waiting and the question (Hidden for a password); the next
//     command is its answer; [envs.EndOfInput] and [envs.Interrupt] end
//     it.
//   - Budget ([WithFlood]): a response over its token budget keeps its
//     head and tail, names the file that holds all of it, and the file
//     does.
//   - WholeOutput ([WithFlood], [WithOutputLimit]): with $TMPDIR set to a
//     directory of the check's own, a quick command leaves no file there;
//     then 1 MB of lines (at least 16 times the output limit), with no
//     budget and with one, comes back bounded (about the output limit, or
//     the budget), with its head and tail and the name of a file that
//     holds every line, in order; after Close nothing is left in $TMPDIR.
//   - Queue ([WithPhased]): a command waiting behind a busy one comes back
//     at its own deadline, hard or soft, counted from its arrival.
package envtest

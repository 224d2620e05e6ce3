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
//		}, "true", envtest.WithBlocking("sleep 600"))
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
package envtest

// Package faults holds fault-injection tests for the process environments
// (bash and python), run through their public APIs and the orchestrator:
// the process killed with SIGKILL in the middle of a command, a child that
// ignores SIGINT, 100 MB of output, and the session log staying complete
// through all of it. It has no code of its own; see docs/reliability.md for
// the whole table of faults and the tests that show each.
//
// # Running
//
//	go test -race ./bench/faults
//
// The tests need bash and python3 and skip, saying why, when either is
// missing.
package faults

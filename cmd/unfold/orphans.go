package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/unfold-dev/unfold/internal/procs"
)

// adoptOrphans makes this process the reaper of the orphans its
// environments' programs leave, for the commands that run environments for
// a long time (serve, repl, agent, mcp): a program that dies or is
// restarted leaves its children to be re-parented, and where PID 1 does not
// reap, as in most containers, each of them would stay a zombie once
// killed or ended. Only zombie children that no exec.Cmd waits for are
// reaped (see internal/procs), so upstream MCP servers and the
// environments' own programs keep their exit statuses. stop ends it. Where
// it cannot be done (not Linux) nothing changes; any other failure is said
// on stderr and the command goes on.
func adoptOrphans(name string, stderr io.Writer) (stop func()) {
	stop, err := procs.AdoptOrphans()
	if err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			fmt.Fprintf(stderr, "unfold %s: %v; processes left behind by environments may stay zombies\n", name, err)
		}
		return func() {}
	}
	return stop
}

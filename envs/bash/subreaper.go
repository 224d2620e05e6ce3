package bash

import (
	"fmt"

	"github.com/unfold-dev/unfold/internal/procs"
)

// BecomeSubreaper makes this process the reaper of its orphaned
// descendants (Linux PR_SET_CHILD_SUBREAPER) for the rest of its life, and
// reaps them as they end. Without it, background jobs left behind by a
// shell that died are re-parented to PID 1, and where PID 1 does not reap
// (as in many containers) they stay zombies after [Shell.Close] ends them,
// or after they end by themselves; with it they come to this process,
// which reaps them, and never a child that an exec.Cmd of the program
// waits for (a child started with syscall.ForkExec, which holds no
// os.Process, is taken for an orphan). It affects the whole process: call it once, early, in
// programs that run shells for a long time. It fails on platforms other
// than Linux, and on Linux before 5.4.
func BecomeSubreaper() error {
	if _, err := procs.AdoptOrphans(); err != nil {
		return fmt.Errorf("bash: become subreaper: %w", err)
	}
	return nil
}

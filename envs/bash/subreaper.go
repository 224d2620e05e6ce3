package bash

import (
	"fmt"

	"github.com/unfold-dev/unfold/internal/term"
)

// BecomeSubreaper makes this process the reaper of its orphaned
// descendants (Linux PR_SET_CHILD_SUBREAPER). Without it, background jobs
// left behind by a shell that died are re-parented to PID 1, and where PID 1
// does not reap (as in many containers) they stay zombies after [Shell.Close]
// ends them; with it they come to this process, and Close and restarts reap
// them. It affects the whole process: call it once, early, in programs that
// run shells for a long time. It fails on platforms other than Linux.
func BecomeSubreaper() error {
	if err := term.BecomeSubreaper(); err != nil {
		return fmt.Errorf("bash: become subreaper: %w", err)
	}
	return nil
}

package orchestrator

import (
	"fmt"
	"sync"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/utf8cut"
	"github.com/unfold-dev/unfold/session"
)

// EventCommandExecuted is the name of [CommandExecuted] in a saved session
// log.
const EventCommandExecuted = "orchestrator.command_executed"

// maxEventCommand bounds the command text a [CommandExecuted] event keeps, in
// bytes, so a huge command does not live on in the session log.
const maxEventCommand = 4 << 10

// CommandExecuted records one command an environment ran. Command holds at
// most 4 KiB of the command text, followed by a note of how
// many bytes were left out.
type CommandExecuted struct {
	Environment string        `json:"environment"`
	Command     string        `json:"command"`
	Success     bool          `json:"success"`
	Duration    time.Duration `json:"duration"`
}

func eventCommand(command string) string {
	if len(command) <= maxEventCommand {
		return command
	}
	kept := utf8cut.Prefix(command, maxEventCommand)
	return kept + fmt.Sprintf("\n[... %d more bytes]", len(command)-len(kept))
}

// UsageSlice is the session slice that counts commands per environment. It
// is what opens an on-demand environment's section after its first command.
var UsageSlice = session.NewSlice("orchestrator.usage", envs.Usage{})

// registerMu makes RegisterSession's check-then-install atomic.
var registerMu sync.Mutex

// RegisterSession installs [UsageSlice], its reducer and the
// [EventCommandExecuted] name in sess. Calling it again on the same session
// does nothing. [New] calls it for the session given with [WithSession].
func RegisterSession(sess *session.Session) error {
	registerMu.Lock()
	defer registerMu.Unlock()
	if session.Registered(sess, UsageSlice) {
		return nil
	}
	if err := session.RegisterEvent[CommandExecuted](sess, EventCommandExecuted); err != nil {
		return err
	}
	return session.On(sess, UsageSlice, func(u envs.Usage, e CommandExecuted) envs.Usage { return u.Ran(e.Environment) })
}

// GetUsage returns the commands each environment ran, as recorded in sess
// ([envs.Usage.Count]); none when sess is nil or has no usage slice.
func GetUsage(sess *session.Session) envs.Usage { return session.Get(sess, UsageSlice) }

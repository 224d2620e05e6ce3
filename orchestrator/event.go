package orchestrator

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/unfold-dev/unfold/session"
)

// EventCommandExecuted is the name of [CommandExecuted] in a saved session
// log.
const EventCommandExecuted = "orchestrator.command_executed"

// MaxEventCommand bounds the command text a [CommandExecuted] event keeps, in
// bytes, so a huge command does not live on in the session log.
const MaxEventCommand = 4 << 10

// CommandExecuted records one command an environment ran. Command holds at
// most [MaxEventCommand] bytes of the command text, followed by a note of how
// many bytes were left out.
type CommandExecuted struct {
	Environment string        `json:"environment"`
	Command     string        `json:"command"`
	Success     bool          `json:"success"`
	Duration    time.Duration `json:"duration"`
}

func eventCommand(command string) string {
	if len(command) <= MaxEventCommand {
		return command
	}
	end := MaxEventCommand
	for end > 0 && !utf8.RuneStart(command[end]) {
		end--
	}
	return command[:end] + fmt.Sprintf("\n[... %d more bytes]", len(command)-end)
}

// Usage counts the commands each environment has run. It is an immutable
// value; the session replaces it on every [CommandExecuted].
type Usage struct {
	m map[string]int
}

// Count returns how many commands env has run.
func (u Usage) Count(env string) int { return u.m[env] }

// Used reports whether env has run at least one command.
func (u Usage) Used(env string) bool { return u.m[env] > 0 }

// Environments returns the names of the environments that have run a
// command, sorted.
func (u Usage) Environments() []string { return slices.Sorted(maps.Keys(u.m)) }

// add returns u with one more command for env.
func (u Usage) add(env string) Usage {
	n := make(map[string]int, len(u.m)+1)
	maps.Copy(n, u.m)
	n[env]++
	return Usage{m: n}
}

// MarshalJSON encodes the usage as an object of environment name to count.
func (u Usage) MarshalJSON() ([]byte, error) {
	if u.m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(u.m)
}

// UnmarshalJSON decodes an object of environment name to count.
func (u *Usage) UnmarshalJSON(data []byte) error {
	var m map[string]int
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("orchestrator: usage: %w", err)
	}
	*u = Usage{m: m}
	return nil
}

// UsageSlice is the session slice that counts commands per environment. It
// is what opens an on-demand environment's section after its first command.
var UsageSlice = session.NewSlice("orchestrator.usage", Usage{})

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
	return session.On(sess, UsageSlice, func(u Usage, e CommandExecuted) Usage { return u.add(e.Environment) })
}

// GetUsage returns the usage recorded in sess; none when sess is nil or has
// no usage slice.
func GetUsage(sess *session.Session) Usage { return session.Get(sess, UsageSlice) }

package envs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/unfold-dev/unfold/session"
)

// CommandUsed records that an environment's command ran for the first time.
// [Declarative] dispatches it before running a command it has not recorded
// yet; its reducer adds the command to [Usage].
type CommandUsed struct {
	Environment string `json:"environment"`
	Command     string `json:"command"`
}

// EventCommandUsed is the name of [CommandUsed] in a saved session log.
const EventCommandUsed = "envs.command_used"

// Usage is what the environments have been used for so far: per
// environment, how many commands it ran and which of its named commands
// were used (for help that shortens once a command is used). It is an
// immutable value: [Usage.With] and [Usage.Ran] return a new one. The zero
// Usage is empty.
//
// Two session slices hold a Usage: [UsageSlice] records the commands a
// [Declarative] environment used, and the orchestrator's records the
// commands every environment ran.
type Usage struct {
	m map[string]envUsage
}

// envUsage is one environment's usage.
type envUsage struct {
	Runs     int      `json:"runs,omitempty"`
	Commands []string `json:"commands,omitempty"` // sorted, no duplicates
}

// Used reports whether command has been used in the environment env.
func (u Usage) Used(env, command string) bool {
	_, ok := slices.BinarySearch(u.m[env].Commands, command)
	return ok
}

// Commands returns the commands used in env, sorted.
func (u Usage) Commands(env string) []string {
	return slices.Clone(u.m[env].Commands)
}

// Count returns how many commands env has run.
func (u Usage) Count(env string) int { return u.m[env].Runs }

// Environments returns the environments with any usage recorded, sorted.
func (u Usage) Environments() []string { return slices.Sorted(maps.Keys(u.m)) }

// With returns u plus command used in env.
func (u Usage) With(env, command string) Usage {
	e := u.m[env]
	i, ok := slices.BinarySearch(e.Commands, command)
	if ok {
		return u
	}
	e.Commands = slices.Insert(slices.Clip(slices.Clone(e.Commands)), i, command)
	return u.set(env, e)
}

// Ran returns u plus one command run in env.
func (u Usage) Ran(env string) Usage {
	e := u.m[env]
	e.Runs++
	return u.set(env, e)
}

func (u Usage) set(env string, e envUsage) Usage {
	m := make(map[string]envUsage, len(u.m)+1)
	maps.Copy(m, u.m)
	m[env] = e
	return Usage{m: m}
}

// MarshalJSON encodes the usage as an object of environment to
// {"runs": n, "commands": [sorted names]}.
func (u Usage) MarshalJSON() ([]byte, error) {
	if u.m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(u.m)
}

// UnmarshalJSON decodes what MarshalJSON encodes; commands may come in any
// order, duplicates allowed.
func (u *Usage) UnmarshalJSON(data []byte) error {
	var m map[string]envUsage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("envs: usage: %w", err)
	}
	for env, e := range m {
		e.Commands = slices.Clone(e.Commands)
		slices.Sort(e.Commands)
		e.Commands = slices.Compact(e.Commands)
		m[env] = e
	}
	*u = Usage{m: m}
	return nil
}

// UsageSlice is the session slice that holds [Usage]. Install it with
// [RegisterUsage], which also installs its reducer; registering it with
// session.Register alone would leave it without one.
var UsageSlice = session.NewSlice("envs.usage", Usage{})

// registerMu makes RegisterUsage's check-then-install atomic.
var registerMu sync.Mutex

// RegisterUsage installs [UsageSlice], its reducer and the [CommandUsed]
// event name in sess. Calling it again on the same session does nothing.
// [NewDeclarative] calls it; call it yourself to restore a snapshot or replay
// a log into a session before its environments exist.
func RegisterUsage(sess *session.Session) error {
	registerMu.Lock()
	defer registerMu.Unlock()
	if session.Registered(sess, UsageSlice) {
		return nil
	}
	if err := session.RegisterEvent[CommandUsed](sess, EventCommandUsed); err != nil {
		return err
	}
	return session.On(sess, UsageSlice, func(u Usage, e CommandUsed) Usage {
		return u.With(e.Environment, e.Command)
	})
}

// GetUsage returns the usage recorded in sess; none when sess is nil or has
// no usage slice.
func GetUsage(sess *session.Session) Usage { return session.Get(sess, UsageSlice) }

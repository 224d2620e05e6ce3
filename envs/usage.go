package envs

import (
	"encoding/json"
	"slices"
	"sort"
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

// Usage is the set of commands used so far, per environment. It is an
// immutable value: With returns a new one. The zero Usage is empty.
type Usage struct {
	m map[string][]string // environment -> command names, sorted, no duplicates
}

// Used reports whether command has been used in the environment env.
func (u Usage) Used(env, command string) bool {
	_, ok := slices.BinarySearch(u.m[env], command)
	return ok
}

// Commands returns the commands used in env, sorted.
func (u Usage) Commands(env string) []string {
	return slices.Clone(u.m[env])
}

// Environments returns the environments with at least one used command,
// sorted.
func (u Usage) Environments() []string {
	envs := make([]string, 0, len(u.m))
	for e := range u.m {
		envs = append(envs, e)
	}
	sort.Strings(envs)
	return envs
}

// With returns u plus command used in env.
func (u Usage) With(env, command string) Usage {
	cmds := u.m[env]
	i, ok := slices.BinarySearch(cmds, command)
	if ok {
		return u
	}
	m := make(map[string][]string, len(u.m)+1)
	for k, v := range u.m {
		m[k] = v
	}
	m[env] = slices.Insert(slices.Clip(slices.Clone(cmds)), i, command)
	return Usage{m: m}
}

// MarshalJSON encodes the usage as an object of environment to sorted
// command names.
func (u Usage) MarshalJSON() ([]byte, error) {
	if u.m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(u.m)
}

// UnmarshalJSON decodes an object of environment to command names, in any
// order, duplicates allowed.
func (u *Usage) UnmarshalJSON(data []byte) error {
	var m map[string][]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for env, cmds := range m {
		cmds = slices.Clone(cmds)
		slices.Sort(cmds)
		m[env] = slices.Compact(cmds)
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

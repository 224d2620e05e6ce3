package orchestrator

import (
	"context"
	"fmt"

	"github.com/unfold-dev/unfold/envs"
)

// unavailableInteractive stands in for an interactive spec file when no
// [InteractiveFactory] is configured: the file is validated and the
// environment is listed, but it cannot run commands, and says so.
type unavailableInteractive struct {
	spec InteractiveSpec
}

var (
	_ envs.Env        = (*unavailableInteractive)(nil)
	_ envs.Summarizer = (*unavailableInteractive)(nil)
)

func newUnavailableInteractive(spec InteractiveSpec) (envs.Env, error) {
	return &unavailableInteractive{spec: spec}, nil
}

func (u *unavailableInteractive) Execute(context.Context, string) (envs.Response, error) {
	return envs.Response{
		Output: fmt.Sprintf("Interactive environments are not available in this build: %s (%q, declared in %s) was validated but cannot be started. Use another environment for this command.", u.spec.Name, u.spec.Command, u.spec.File),
	}, nil
}

func (u *unavailableInteractive) Screen() (envs.Screen, error) {
	return envs.Screen{Content: u.spec.Description + "\n(not available in this build: interactive environments cannot be started yet)"}, nil
}

// QuickScreen marks the screen as one that never blocks: it is fixed text.
func (u *unavailableInteractive) QuickScreen() {}

func (u *unavailableInteractive) Summary() string {
	return u.spec.Description + " (not available)"
}

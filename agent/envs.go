package agent

import (
	"fmt"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// envState is the orchestrator's environments as the agent takes them:
// their sections as one prompt (nil when there are none), their command
// tools, and the orchestrator's generation they were taken at.
type envState struct {
	screens *prompt.Prompt
	tools   map[string]*tools.Tool
	gen     uint64
}

// takeEnvs reads the orchestrator's environments.
func (a *Agent) takeEnvs() (envState, error) {
	o := a.cfg.Orchestrator
	var st envState
	var err error
	if _, st.tools, st.gen, err = o.CommandTools(); err != nil {
		return st, err
	}
	secs, err := o.Sections()
	if err != nil {
		return st, err
	}
	if len(secs) > 0 {
		t, err := prompt.New("unfold/agent", "screens", secs...)
		if err == nil {
			st.screens, err = t.Bind()
		}
		if err != nil {
			return st, fmt.Errorf("environment sections: %w", err)
		}
	}
	return st, nil
}

// screensPart is the index of the environments' part in the agent's
// disclosure, when there is one: after the agent's own prompt (part 0).
const screensPart = 1

// part is the environments' part of the agent's disclosure, rendered into
// the newest message.
func (st envState) part(cfg config) prompt.Part {
	var opts []prompt.RenderOption
	if cfg.Counter != nil {
		opts = append(opts, prompt.WithTokens(cfg.Counter))
	}
	return prompt.Part{Prompt: st.screens, Options: opts}
}

// keepEnvs makes st the agent's environments.
func (a *Agent) keepEnvs(st envState) {
	a.envTool, a.envGen, a.screens = st.tools, st.gen, st.screens != nil
}

// followEnvs brings the environments' sections and tools in line with the
// orchestrator's environments when they changed since the agent took
// them: spec files added, changed or removed, picked up here if no command
// did yet (the step that just ran may have written one). The sections are
// built again and replace the old ones with the session's openings kept,
// so an environment added on demand is summarized until opened or used,
// as any other. On an error the agent goes on with the environments as
// they were, until they change again.
func (a *Agent) followEnvs() error {
	o := a.cfg.Orchestrator
	if o == nil {
		return nil
	}
	o.ReloadSpecs()
	if o.Generation() == a.envGen {
		return nil
	}
	st, err := a.takeEnvs()
	if err == nil {
		switch {
		case st.screens != nil && a.screens:
			err = a.disc.Replace(screensPart, st.screens)
		case st.screens != nil:
			err = a.disc.Add(st.part(a.cfg))
		case a.screens:
			err = a.disc.Remove(screensPart)
		}
	}
	if err != nil {
		a.envGen = st.gen // told once for this change
		return err
	}
	a.keepEnvs(st)
	return nil
}

// followPrompt builds the prompt again and puts it in place of the old
// one when its count of changes moved ([WithPromptChanges]). On an error
// the agent goes on with the prompt as it was, until it changes again.
func (a *Agent) followPrompt() error {
	if a.cfg.Changes == nil {
		return nil
	}
	n := a.cfg.Changes()
	if n == a.promptGen {
		return nil
	}
	a.promptGen = n // told once for this change
	p, err := a.cfg.Rebuild()
	if err == nil {
		err = a.disc.Replace(0, p)
	}
	return err
}

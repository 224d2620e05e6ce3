package main

import (
	"fmt"
	"io"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// builtin is an environment every project gets, before its spec files.
type builtin struct {
	name string
	// new makes the environment for the project directory; sess is the
	// session the orchestrator dispatches to.
	new func(project string, sess *session.Session) (envs.Env, error)
	// opts are registration options; without orchestrator.OnDemand the
	// environment's prompt section renders in full from the first turn.
	opts []orchestrator.RegisterOption
}

// builtins lists the built-in environments, in registration order. Each
// environment package (bash, python, editor) adds its entry here.
var builtins = []builtin{}

// newOrchestrator builds the orchestrator serve and repl share: a session,
// the built-in environments, then the project's spec files. Spec files that
// fail to load are reported on stderr (and on the orchestrator's screen);
// they do not stop the others.
func newOrchestrator(project string, maxLineBytes int, stderr io.Writer) (*orchestrator.Orchestrator, error) {
	sess := session.New()
	o, err := orchestrator.New(orchestrator.WithSession(sess), orchestrator.WithMaxLineBytes(maxLineBytes))
	if err != nil {
		return nil, err
	}
	for _, b := range builtins {
		env, err := b.new(project, sess)
		if err == nil {
			err = o.Register(b.name, env, b.opts...)
		}
		if err != nil {
			_ = o.Close()
			return nil, fmt.Errorf("built-in environment %s: %w", b.name, err)
		}
	}
	if err := o.LoadSpecs(project); err != nil {
		for _, e := range o.LoadErrors() {
			fmt.Fprintf(stderr, "unfold: skipped %v\n", e)
		}
		if len(o.LoadErrors()) == 0 {
			// Not a bad file: the directory itself could not be read.
			_ = o.Close()
			return nil, err
		}
	}
	return o, nil
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/envs/bash"
	"github.com/unfold-dev/unfold/envs/editor"
	"github.com/unfold-dev/unfold/envs/interactive"
	"github.com/unfold-dev/unfold/envs/python"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
)

// serverLogLimit is how many session events serve, repl and mcp keep in
// memory; state is unaffected.
const serverLogLimit = 4096

// builtin is an environment every project gets, before its spec files.
type builtin struct {
	name string
	// new makes the environment for the project directory; sess is the
	// session the orchestrator dispatches to.
	new func(project string, sess *session.Session) (envs.Env, error)
	// opts are registration options; without orchestrator.OnDemand the
	// environment's prompt section renders in full from the first turn.
	opts []orchestrator.RegisterOption
	// runs: the environment runs any program the model names. writes: it
	// writes files the model names. See fixedSpecs.
	runs, writes bool
}

// builtins lists the built-in environments, in registration order. Each
// environment package (bash, python, editor) adds its entry here.
var builtins = []builtin{
	{name: "bash", new: func(project string, _ *session.Session) (envs.Env, error) {
		return bash.New(bash.WithDir(project))
	}, runs: true, writes: true},
	{name: "python", new: func(project string, _ *session.Session) (envs.Env, error) {
		return python.New(python.WithDir(project))
	}, runs: true, writes: true},
	{name: editor.Name, new: func(project string, sess *session.Session) (envs.Env, error) {
		return editor.New(project, sess)
	}, writes: true},
}

// newOrchestrator builds the orchestrator serve and repl share: a session,
// the built-in environments, then the project's spec files. Spec files that
// fail to load are reported on stderr (and on the orchestrator's screen);
// they do not stop the others. Output cut to a response's token budget
// (opts may set it; default [orchestrator.DefaultOutputBudget]) is saved
// under the project's context/output.
func newOrchestrator(project string, maxLineBytes int, names string, stderr io.Writer, opts ...orchestrator.Option) (*orchestrator.Orchestrator, error) {
	// A server lives long: keep the newest events only, so memory levels off.
	sess := session.New(session.WithLogLimit(serverLogLimit))
	return assemble(project, names, stderr, func(b builtin) (envs.Env, error) { return b.new(project, sess) },
		append([]orchestrator.Option{
			orchestrator.WithSession(sess),
			orchestrator.WithMaxLineBytes(maxLineBytes),
			orchestrator.WithInteractive(newInteractive),
			orchestrator.WithProject(project),
			orchestrator.WithOutputBudget(orchestrator.DefaultOutputBudget),
		}, opts...)...,
	)
}

// assemble makes an orchestrator with opts, registers the built-ins names
// chooses (each made by newEnv), then loads the project's spec files.
func assemble(project, names string, stderr io.Writer, newEnv func(builtin) (envs.Env, error), opts ...orchestrator.Option) (*orchestrator.Orchestrator, error) {
	chosen, err := chooseBuiltins(names)
	if err != nil {
		return nil, err
	}
	if why := fixedSpecs(chosen); why != "" {
		opts = append(opts, orchestrator.WithoutSpecReload(why))
	}
	o, err := orchestrator.New(opts...)
	if err != nil {
		return nil, err
	}
	for _, b := range chosen {
		env, err := newEnv(b)
		if ed, ok := env.(*editor.Editor); ok && err == nil && fixedSpecs(chosen) != "" {
			// With spec files fixed, the editor keeps the files of their
			// programs as they are.
			ed.SetWriteCheck(o.ProgramFile)
		}
		if err == nil {
			err = o.Register(b.name, env, b.opts...)
		}
		if err != nil {
			_ = o.Close()
			return nil, fmt.Errorf("built-in environment %s: %w", b.name, err)
		}
	}
	if err := loadSpecs(o, project, stderr); err != nil {
		_ = o.Close()
		return nil, err
	}
	return o, nil
}

// fixedSpecs says why the project's spec files load only when the command
// starts, or is "" when changes to them are loaded as the run goes on.
// They are fixed when an environment writes files and none runs programs
// (the editor without bash and python): a spec file the model wrote would
// give it a program to run that the user did not allow.
func fixedSpecs(chosen []builtin) string {
	writes := false
	for _, b := range chosen {
		if b.runs {
			return ""
		}
		writes = writes || b.writes
	}
	if !writes {
		return ""
	}
	return "no environment of this run runs programs (bash, python): only the editor is on, and a file it writes could make a program run"
}

// loadSpecs loads the project's spec files into o, reporting those that
// fail on stderr; it fails only when the directory cannot be read.
func loadSpecs(o *orchestrator.Orchestrator, project string, stderr io.Writer) error {
	err := o.LoadSpecs(project)
	if err == nil {
		return nil
	}
	for _, e := range o.LoadErrors() {
		fmt.Fprintf(stderr, "unfold: skipped %v\n", e)
	}
	if len(o.LoadErrors()) == 0 {
		// Not a bad file: the directory itself could not be read.
		return err
	}
	return nil
}

// budgetUsage describes the --output-budget flag.
const budgetUsage = "the most `tokens` a command's output may take in a reply: past it the middle is left out and the whole output saved under DIR/context/output"

// checkBudget checks an --output-budget value.
func checkBudget(n int) error {
	if n < 1 {
		return fmt.Errorf("--output-budget must be 1 or more, got %d", n)
	}
	return nil
}

// builtinsUsage describes the --builtins flag.
func builtinsUsage() string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return "comma-separated built-in environments to start (" + strings.Join(names, ", ") + "), \"all\", or \"none\" for only the project's spec files"
}

// chooseBuiltins picks the built-ins a --builtins value names.
func chooseBuiltins(names string) ([]builtin, error) {
	switch strings.TrimSpace(names) {
	case "", "all":
		return builtins, nil
	case "none":
		return nil, nil
	}
	var out []builtin
	for name := range strings.SplitSeq(names, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(builtins, func(b builtin) bool { return b.name == name })
		if i < 0 {
			return nil, fmt.Errorf("--builtins: unknown environment %q; %s", name, builtinsUsage())
		}
		out = append(out, builtins[i])
	}
	return out, nil
}

// newInteractive makes the environment for an interactive spec file: the
// program starts on its first command.
func newInteractive(s orchestrator.InteractiveSpec) (envs.Env, error) {
	e, err := interactive.New(interactive.Spec{Name: s.Name, Args: s.Args, Prompt: s.Prompt, Continuation: s.Continuation, Init: s.Init, Description: s.Description, Dir: s.Dir,
		Timeout: s.Limits.Wait, Hard: s.Hard, Quiet: s.Limits.Quiet, Budget: s.Limits.Budget, Resources: s.Resources, StartCheck: s.StartCheck})
	if err != nil {
		return nil, err
	}
	return e, nil
}

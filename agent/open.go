package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// deferTools takes the tools of the sections not shown in full at the
// run's start as its deferred groups.
func (r *run) deferTools() {
	r.deferred, r.owner = nil, map[string]string{}
	for _, d := range r.a.disc.Deferred() {
		g := ToolGroup{Section: d.Path, Title: d.Title, Summary: d.Summary}
		for _, t := range d.Tools {
			if _, offered := r.byName[t.Name()]; offered {
				continue
			}
			g.Tools = append(g.Tools, toolDef(t))
			r.owner[t.Name()] = d.Path
		}
		if len(g.Tools) > 0 {
			r.deferred = append(r.deferred, g)
		}
	}
}

// expand opens the sections a tool call asked for, through the
// disclosure: the overrides go into the session, both prompts render again
// and the call is answered with what opened and the new tools. An opening
// the disclosure refused (the sections do not fit the budget) changed
// nothing: the call fails with the reason, and the run goes on.
func (r *run) expand(err error) (tools.Result, error) {
	if r.expansions >= MaxExpansions {
		return tools.Result{Message: ErrExpansionLimit.Error()}, ErrExpansionLimit
	}
	// The tool may have changed the prompt (a server it started listed
	// its tools): the keys it asks to open are in the new one.
	r.followPrompt()
	op, err := r.a.disc.Expand(err)
	if refused, ok := errors.AsType[*prompt.OpenError](err); ok {
		r.progress(Progress{Kind: "expansion", Detail: strings.Join(refused.Keys, ", ")})
		return tools.Result{Message: refused.Error()}, nil
	}
	if err != nil {
		return tools.Result{Message: err.Error()}, fmt.Errorf("agent: %w", err)
	}
	if err := r.opened(op); err != nil {
		return tools.Result{Message: err.Error()}, err
	}
	res := op.Result()
	if r.a.cfg.Disclosure == DisclosureAppend && (r.a.cfg.Actions == ActionsText || r.bridge != nil) && len(op.NewTools) > 0 {
		// The system message or the tool list that lists the tools stays
		// as it was.
		res.Message += "\n\n" + r.newToolsText(op.NewTools)
	}
	return res, nil
}

// openAndCall opens the section at path for a call of its deferred tool
// name, then runs the call; the result starts with what opened.
func (r *run) openAndCall(name, path, args string) (tools.Result, error) {
	if r.expansions >= MaxExpansions {
		return tools.Result{Message: ErrExpansionLimit.Error()}, ErrExpansionLimit
	}
	op, err := r.a.disc.Open(r.ctx, []string{path}, "the model called "+name)
	if err != nil {
		if r.ctx.Err() != nil {
			return tools.Result{Message: err.Error()}, fmt.Errorf("agent: %w", err)
		}
		if refused, ok := errors.AsType[*prompt.OpenError](err); ok {
			return tools.Result{Message: fmt.Sprintf("%s belongs to section %q, which was not opened. %v", name, path, refused)}, nil
		}
		return tools.Result{Message: fmt.Sprintf("%s belongs to section %q, which could not be opened: %v", name, path, err)}, nil
	}
	if err := r.opened(op); err != nil {
		return tools.Result{Message: err.Error()}, err
	}
	t, ok := r.byName[name]
	if !ok {
		return tools.Result{Message: fmt.Sprintf("Opened %s, but it does not offer %s.", path, name)}, nil
	}
	if r.a.cfg.DryRun {
		return dryRun(name, args), nil
	}
	res, err := r.runTool(name, t, args)
	opening := op.String()
	if r.bridge != nil && len(op.NewTools) > 0 {
		opening += "\n\n" + r.newToolsText(op.NewTools)
	}
	res.Message = opening + "\n\n" + res.Message
	return res, err
}

// opened takes an opening's renders and records it. Only openings that
// happened count against MaxExpansions: one the disclosure refused
// changed nothing.
func (r *run) opened(op *prompt.Opened) error {
	r.expansions++
	if err := r.update(); err != nil {
		return err
	}
	r.record(Record{Kind: KindExpansion, Expansion: &ExpansionRecord{Keys: op.Keys, Paths: op.Paths, Reason: op.Reason, Count: r.expansions}})
	r.progress(Progress{Kind: "expansion", Success: true, Detail: strings.Join(op.Keys, ", ")})
	for _, name := range op.NewTools {
		if _, ok := r.owner[name]; ok {
			r.loads = append(r.loads, name)
		}
	}
	return nil
}

// takeLoads returns the tools the last opening loaded, once.
func (r *run) takeLoads() []string {
	l := r.loads
	r.loads = nil
	return l
}

// begin renders the prompts for a run's start. When the sections the
// session opened do not fit the budget (a session saved by a run with a
// larger budget, or by a version that let such an opening through), they
// are closed, the most recently opened first, until the prompt fits; the
// returned note tells the model which. Closing them is a session event,
// saved in the transcript like an opening.
func (r *run) begin() (note string, err error) {
	err = r.refresh()
	if !errors.Is(err, prompt.ErrOverBudget) {
		return "", err
	}
	closed, err := r.a.disc.Refit()
	if err != nil {
		return "", err // the budget error, or why closing failed
	}
	if err := r.refresh(); err != nil || len(closed) == 0 {
		return "", err // with nothing closed, it fits now
	}
	r.progress(Progress{Kind: "expansion", Success: true, Detail: "closed " + strings.Join(closed, ", ")})
	it := "it"
	if len(closed) > 1 {
		it = "them"
	}
	return fmt.Sprintf("Closed %s: with %s open, the prompt did not fit its token budget of %d tokens. Open a section again only when it is needed.",
		strings.Join(closed, ", "), it, r.a.cfg.Budget), nil
}

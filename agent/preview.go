package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/unfold-dev/unfold/tokens"
)

// Preview is the first request a run would send, and its size.
type Preview struct {
	Request Request
	// Tokens of the system message, the tool definitions (deferred
	// groups included) and the other messages, counted with the agent's
	// counter (tokens.Estimate without one).
	SystemTokens, ToolTokens, MessageTokens int
}

// Preview returns the first request [Agent.Run] would send for task,
// calling no model and no tool and writing no transcript: the prompt is
// rendered and the environments' screens are read as they are now.
func (a *Agent) Preview(task string) (*Preview, error) {
	if strings.TrimSpace(task) == "" {
		return nil, errors.New("agent: preview: empty task; say what the agent should do")
	}
	r, err := a.newRun(context.Background())
	if err != nil {
		return nil, err
	}
	r.tw = nil
	if err := r.refresh(); err != nil {
		return nil, err
	}
	first := task
	if obs := r.screenUpdate(true); obs != "" {
		first += "\n\n" + obs
	}
	r.msgs = append(r.msgs, Message{Role: RoleUser, Content: first})
	req := r.request(a.cfg.Actions == ActionsNative)
	counter := a.cfg.Counter
	if counter == nil {
		counter = tokens.Estimate
	}
	pv := &Preview{Request: req, SystemTokens: counter.Count(req.Messages[0].Content)}
	for _, m := range req.Messages[1:] {
		pv.MessageTokens += counter.Count(m.Content)
	}
	for _, t := range req.Tools {
		pv.ToolTokens += counter.Count(marshal(t))
	}
	for _, g := range req.Deferred {
		pv.ToolTokens += counter.Count(marshal(g))
	}
	return pv, nil
}

package agent

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
)

// runCalls runs the tool calls of one reply in order, each answered: the
// first MaxToolCalls run, except a call the reply was cut in, whose name
// it returns. A Go error ends the run, the calls after it answered as not
// run.
func (r *run) runCalls(calls []ToolCall) (cut string, err error) {
	for i, c := range calls {
		if i == MaxToolCalls {
			for _, rest := range calls[i:] {
				r.add(Message{Role: RoleTool, ToolCallID: rest.ID, Content: tooManyCalls})
			}
			break
		}
		var res tools.Result
		if c.Cut {
			// Its arguments are incomplete (an SDK may even have
			// filled in {}): it must not run.
			cut = c.Name
			res, err = r.timed(c.Name, c.Arguments, c.ID, func() (tools.Result, error) { return tools.Result{Message: cutCall}, nil })
		} else {
			res, err = r.call(c.Name, c.Arguments, c.ID)
		}
		r.add(Message{Role: RoleTool, ToolCallID: c.ID, Content: resultText(res), Loads: r.takeLoads()})
		if err != nil {
			// Answer the calls that will not run, so the conversation
			// stays valid for a resume.
			for _, rest := range calls[i+1:] {
				r.add(Message{Role: RoleTool, ToolCallID: rest.ID, Content: notRun})
			}
			return cut, err
		}
	}
	return cut, nil
}

// uniqueCallIDs gives each call of a reply an ID no other call of the
// conversation has, in place: some OpenAI-compatible servers repeat an ID
// or leave it empty (an endpoint that leaves them empty gets call_1 in
// every reply; one that counts per reply repeats functions.bash:0), the
// results, and a resume after a crash, are matched to calls by ID, and the
// Messages and Responses APIs refuse a conversation that repeats one. used
// holds the IDs of the calls before the reply; those of the reply are
// added to it. The first call with an ID unused before keeps it; a
// repeated or empty one becomes the ID (or "call") with its position in
// the reply, such as x_2, and a count should that be taken too. The new
// ID depends only on the conversation up to the reply, so it is the same
// in every request and after a resume. A reply with Native data is left
// as it is (the caller does not pass it): it goes back to the API as it
// came, and the results must answer the IDs in it. next, when not nil,
// remembers across replies how far each ID's counts are taken, so that a
// conversation of many replies repeating one ID is renamed in linear
// time (used only grows).
func uniqueCallIDs(calls []ToolCall, used map[string]bool, next map[string]int) {
	inReply := make(map[string]bool, len(calls))
	for _, c := range calls {
		inReply[c.ID] = true
	}
	kept := make(map[string]bool, len(calls))
	for i := range calls {
		c := &calls[i]
		if c.ID != "" && !kept[c.ID] && !used[c.ID] {
			kept[c.ID] = true
			continue
		}
		prefix := fmt.Sprintf("%s_%d", cmp.Or(c.ID, "call"), i+1)
		cand := func(n int) string {
			if n == 1 {
				return prefix
			}
			return fmt.Sprintf("%s_%d", prefix, n)
		}
		n := max(1, next[prefix])
		from := n // the candidates before from are taken for good
		for ; used[cand(n)] || inReply[cand(n)]; n++ {
			if from == n && used[cand(n)] {
				from = n + 1
			}
		}
		if next != nil {
			if from == n {
				from = n + 1 // cand(n) is taken now
			}
			next[prefix] = from
		}
		id := cand(n)
		c.ID = id
		inReply[id], kept[id] = true, true
	}
	for _, c := range calls {
		used[c.ID] = true
	}
}

// callIDsOf returns the set of the tool call IDs of msgs.
func callIDsOf(msgs []Message) map[string]bool {
	used := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			used[c.ID] = true
		}
	}
	return used
}

// DistinctCallIDs returns msgs with no tool call ID repeated, for an API
// that refuses a repeated one (the Messages and Responses APIs do). The
// loop gives each call an ID of its own, but a transcript written before
// it did, or a conversation built elsewhere, may repeat one: each reply's
// calls get IDs as the loop gives them (uniqueCallIDs), and the results
// after a reply answer its calls' new IDs, in order when two calls shared
// one. The IDs depend only on the messages up to theirs, so a conversation
// that grows keeps them. A reply with Native data keeps its IDs. msgs is
// not changed: a message whose IDs change is a copy, and msgs itself is
// returned when none does.
func DistinctCallIDs(msgs []Message) []Message {
	var out []Message // nil until an ID changes
	set := func(i int, m Message) {
		if out == nil {
			out = slices.Clone(msgs)
		}
		out[i] = m
	}
	used, next := map[string]bool{}, map[string]int{}
	var answers map[string][]string // an ID as the last reply had it: the new IDs of its calls, in order
	for i, m := range msgs {
		switch {
		case m.Role == RoleAssistant && m.Native == nil && len(m.ToolCalls) > 0:
			calls := slices.Clone(m.ToolCalls)
			uniqueCallIDs(calls, used, next)
			answers = make(map[string][]string, len(calls))
			changed := false
			for j, c := range calls {
				orig := m.ToolCalls[j].ID
				answers[orig] = append(answers[orig], c.ID)
				changed = changed || c.ID != orig
			}
			if changed {
				m.ToolCalls = calls
				set(i, m)
			}
		case m.Role == RoleAssistant:
			for _, c := range m.ToolCalls {
				used[c.ID] = true
			}
			answers = nil
		case m.Role == RoleTool:
			ids := answers[m.ToolCallID]
			if len(ids) == 0 {
				continue
			}
			id := ids[0]
			if len(ids) > 1 {
				answers[m.ToolCallID] = ids[1:]
			}
			if id != m.ToolCallID {
				m.ToolCallID = id
				set(i, m)
			}
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// resultText is what the model reads of a result: the message, marked when
// the call failed.
func resultText(res tools.Result) string {
	if res.Success {
		return res.Message
	}
	return "Error: " + res.Message
}

// call runs one tool call and records it. A Go error ends the run: an
// infrastructure fault, a cancelled context, or too many expansions.
func (r *run) call(name, args, id string) (tools.Result, error) {
	return r.timed(name, args, id, func() (tools.Result, error) { return r.dispatch(name, args) })
}

// timed runs f as the call of a tool, recording it and its timing: a call
// record before it starts, so a resume knows it may have taken effect, and
// after it the result and the session events it caused, so a run stopped
// later in the step keeps them. A call that cannot be recorded does not
// start.
func (r *run) timed(name, args, id string, f func() (tools.Result, error)) (tools.Result, error) {
	r.record(Record{Kind: KindCall, Tool: &ToolRecord{ID: id, Name: name, Arguments: args}})
	if err := r.tw.err(); err != nil {
		return tools.Result{Message: notRun}, err
	}
	t0 := r.a.cfg.Now()
	res, err := f()
	took := r.a.cfg.Now().Sub(t0)
	tr := ToolRecord{ID: id, Name: name, Arguments: args, Success: res.Success, Result: res.Message}
	if err != nil {
		tr.Error = err.Error()
	}
	r.record(Record{Kind: KindTool, Tool: &tr, ElapsedMS: ms(took)})
	r.saveSession()
	r.progress(Progress{Kind: "tool", Tool: name, Success: res.Success && err == nil})
	return res, err
}

func (r *run) dispatch(name, args string) (tools.Result, error) {
	if r.bridge != nil && name == UseToolName {
		return r.useTool(args)
	}
	t, ok := r.byName[name]
	if path, deferred := r.owner[name]; !ok && deferred && featuresOf(r.a.cfg.Model).DefersTools {
		// The provider showed the tool deferred and the model found it:
		// open its section, as open_sections would, then call it.
		return r.openAndCall(name, path, args)
	}
	if !ok {
		msg := fmt.Sprintf("Unknown tool: %s. Available tools: %s.", name, strings.Join(r.toolNames(), ", "))
		if names := r.bridgedNames(); len(names) > 0 {
			msg += fmt.Sprintf(" Through %s: %s.", UseToolName, strings.Join(names, ", "))
		}
		return tools.Result{Message: msg}, nil
	}
	if r.a.cfg.DryRun && t != r.help && name != prompt.OpenSectionsName {
		return dryRun(name, args), nil
	}
	return r.runTool(name, t, args)
}

// runTool calls t. A Go error from the tool is sections to open, or the
// end of the run.
func (r *run) runTool(name string, t *tools.Tool, args string) (tools.Result, error) {
	res, err := t.Call(r.ctx, r.a.disc.ToolContext(), json.RawMessage(args))
	if err != nil {
		if r.ctx.Err() != nil {
			return res, fmt.Errorf("agent: tool %s: %w", name, err)
		}
		if errors.Is(err, prompt.ErrVisibilityExpansion) {
			return r.expand(err)
		}
		return res, fmt.Errorf("agent: tool %s failed: %w", name, err)
	}
	return res, nil
}

func dryRun(name, args string) tools.Result {
	return tools.Result{Success: true, Message: fmt.Sprintf("Dry run: would call %s with %s. Nothing was run.", name, orEmpty(args))}
}

func orEmpty(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

// MaxToolCalls bounds the tool calls of one reply that run: those after
// it are answered without running (one model reply cannot make a step
// run without end). The model adapters of this module stop reading a
// reply that makes more than 1,024.
const MaxToolCalls = 128

// tooManyCalls answers a call past MaxToolCalls.
var tooManyCalls = fmt.Sprintf("This call did not run: one reply may make at most %d tool calls. Make it again in a later reply if it is still needed.", MaxToolCalls)

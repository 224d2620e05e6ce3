package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// run is the state of one Run or Resume.
type run struct {
	a     *Agent
	ctx   context.Context
	start time.Time
	msgs  []Message // msgs[0] is the system message

	stable  *prompt.Rendered
	screens *prompt.Rendered // nil without environments
	sysSig  string           // which sections the system message shows, and how
	modes   map[string]visibility.Mode
	offered []*tools.Tool
	byName  map[string]*tools.Tool
	help    *tools.Tool
	sent    map[string]string // environment blocks as last sent to the model
	started bool              // the system message of the run's start is set

	// With DisclosureAppend: the rank of each tool in the order first
	// offered, the deferred groups of the run's start (native actions),
	// and the section each deferred tool belongs to.
	rank     map[string]int
	deferred []ToolGroup
	owner    map[string]string
	loads    []string // the tools the last opening loaded, for its tool message
	// clashed names the environments whose command tools are not offered
	// because another tool has their name.
	clashed map[string]bool
	bridge  *tools.Tool // use_tool, when opened sections' tools are called through it

	layout layout // the previous request, for the prefix measure
	pieces pieces // the pieces of the last request laid out, by place

	step       int
	expansions int
	cuts       int // replies in a row cut while writing a tool call
	empties    int // empty replies in a row
	usage      Usage
	answer     string
	logSeq     uint64 // session events already in the transcript
	logStuck   uint64 // the session event that could not be saved, recorded as an error; 0 when none
	tw         *transcriptWriter
}

func (a *Agent) newRun(ctx context.Context) (*run, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &run{a: a, ctx: ctx, start: a.cfg.Now(), sent: map[string]string{}, logSeq: a.sess.Seq()}
	r.tw = newTranscriptWriter(a.cfg.Transcript)
	if a.cfg.Help {
		h, err := tools.NewHelp(r.helpIndex)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		r.help = h
	}
	r.msgs = []Message{{Role: RoleSystem}}
	return r, nil
}

func (r *run) elapsed() time.Duration { return r.a.cfg.Now().Sub(r.start) }

func (r *run) record(rec Record) {
	if r.tw == nil {
		return
	}
	rec.Time = r.a.cfg.Now()
	if rec.Step == 0 {
		rec.Step = r.step
	}
	r.tw.write(rec)
}

func (r *run) progress(p Progress) {
	if f := r.a.cfg.OnProgress; f != nil {
		p.Step, p.Usage, p.Elapsed = r.step, r.usage, r.elapsed()
		f(p)
	}
}

// add appends a message and records it.
func (r *run) add(m Message) {
	r.msgs = append(r.msgs, m)
	r.record(Record{Kind: KindMessage, Message: &m})
}

// finish ends the run: the last session events, the end record, the result.
func (r *run) finish(err error) (*Result, error) {
	r.saveSession()
	res := &Result{
		Answer: r.answer, Steps: r.step, Expansions: r.expansions, Usage: r.usage,
		Elapsed: r.elapsed(), Messages: slices.Clone(r.msgs),
	}
	if p := r.a.cfg.Price; p != nil {
		res.Cost = p.Cost(r.usage)
	}
	end := Record{Kind: KindEnd, Answer: r.answer, Usage: &r.usage, ElapsedMS: ms(res.Elapsed), CostUSD: res.Cost}
	if err != nil {
		end.Error = err.Error()
	}
	r.record(end)
	if werr := r.tw.err(); werr != nil && err == nil {
		err = werr
	}
	return res, err
}

// saveSession copies the session events the transcript lacks into it, in
// the session.WriteLog line format, so a run can resume from the transcript
// alone. It copies those only (session.LogLines), not the whole log, so a
// long run's saves cost what its events do. An event that cannot be saved
// (its type has no name, it cannot be encoded as JSON) is recorded as an
// error, once, and stops the copy there: the events after it wait for it,
// so that the saved log has no gap and a resume replays what it holds.
func (r *run) saveSession() {
	if r.tw == nil || r.a.sess.Seq() <= r.logSeq {
		return
	}
	lines, err := r.a.sess.LogLines(r.logSeq)
	r.logSeq += uint64(len(lines))
	if len(lines) > 0 {
		r.record(Record{Kind: KindSession, Events: lines})
	}
	if err != nil && r.logStuck != r.logSeq+1 {
		r.logStuck = r.logSeq + 1
		r.record(Record{Kind: KindError, Error: fmt.Sprintf("session event %d cannot be saved yet, so neither can those after it, which wait for it: a resume from the transcript as it is replays the events before it only: %v", r.logSeq+1, err)})
	}
}

// refresh follows the environments (spec files added, changed or
// removed) and the prompt ([WithPromptChanges]), renders both prompts
// again, as after a command, and updates the run.
func (r *run) refresh() error {
	if err := r.a.followEnvs(); err != nil {
		r.record(Record{Kind: KindError, Error: "the environments changed, and their sections could not be built again: " + err.Error()})
	}
	r.followPrompt()
	if err := r.a.disc.Render(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return r.update()
}

// followPrompt follows the prompt's changes ([WithPromptChanges]),
// recording an error.
func (r *run) followPrompt() {
	if err := r.a.followPrompt(); err != nil {
		r.record(Record{Kind: KindError, Error: "the prompt changed, and it could not be built again: " + err.Error()})
	}
}

// update takes the disclosure's latest renders: it rebuilds the offered
// tools and, when a section opened or closed, records the render and
// updates the system message (with DisclosureAppend, only the first time).
func (r *run) update() error {
	a := r.a
	stable := a.disc.Rendered(0)
	r.stable = stable
	r.screens = nil
	if a.screens {
		r.screens = a.disc.Rendered(1)
	}
	if err := r.collectTools(); err != nil {
		return err
	}
	sig, modes := signature(stable.Report(), r.screens)
	if r.started && sig == r.sysSig {
		return nil
	}
	opened, closed := diffModes(r.modes, modes)
	r.sysSig, r.modes = sig, modes
	rec := RenderRecord{Tokens: stable.Tokens(), Opened: opened, Closed: closed, Report: sectionRecords(stable.Report())}
	if r.screens != nil {
		rec.Screens = sectionRecords(r.screens.Report())
	}
	if r.started && a.cfg.Disclosure == DisclosureAppend {
		// The system message of the run's start stays: the opening's
		// answer carried the sections.
		r.record(Record{Kind: KindRender, Render: &rec})
		return nil
	}
	if !r.started && a.cfg.Disclosure == DisclosureAppend && a.cfg.Actions == ActionsNative {
		r.deferTools()
		if !a.cfg.NoBridge && !featuresOf(a.cfg.Model).DefersTools && len(r.deferred) > 0 {
			r.bridge = newUseTool()
			if err := r.collectTools(); err != nil {
				return err
			}
		}
	}
	r.started = true
	text := stable.Text()
	if a.cfg.Actions == ActionsText {
		text += "\n\n" + r.actionInstructions()
	}
	r.msgs[0] = Message{Role: RoleSystem, Content: text}
	r.record(Record{Kind: KindRender, Render: &rec, Message: &r.msgs[0]})
	return nil
}

// signature says which sections render and how, in both prompts: the system
// message changes only when it does.
func signature(rep []prompt.SectionReport, screens *prompt.Rendered) (string, map[string]visibility.Mode) {
	var b strings.Builder
	modes := map[string]visibility.Mode{}
	add := func(rep []prompt.SectionReport) {
		for _, s := range rep {
			if s.Enabled && s.Visible {
				modes[s.Path] = s.Mode
				fmt.Fprintf(&b, "%s=%s;", s.Path, s.Mode)
			}
		}
	}
	add(rep)
	if screens != nil {
		// Environment sections matter to the system message only through
		// the tools they offer (text mode lists them there).
		b.WriteString("|")
		add(screens.Report())
	}
	return b.String(), modes
}

// diffModes lists the sections that became FULL and those that stopped
// being FULL.
func diffModes(old, cur map[string]visibility.Mode) (opened, closed []string) {
	if old == nil {
		return nil, nil
	}
	for p, m := range cur {
		if m == visibility.Full && old[p] != visibility.Full {
			opened = append(opened, p)
		}
	}
	for p, m := range old {
		if m == visibility.Full && cur[p] != visibility.Full {
			closed = append(closed, p)
		}
	}
	slices.Sort(opened)
	slices.Sort(closed)
	return opened, closed
}

// collectTools builds the tools offered this step: the prompt's and the
// environments' sections' (each environment's section carries its command
// tool), the extra tools, help, and open_sections last.
func (r *run) collectTools() error {
	var list []*tools.Tool
	var open *tools.Tool
	for _, t := range r.a.disc.Tools() {
		if t.Name() == prompt.OpenSectionsName {
			open = t
			continue
		}
		list = append(list, t)
	}
	list = append(list, r.a.cfg.Tools...)
	if r.bridge != nil {
		list = append(list, r.bridge)
	}
	if r.help != nil {
		list = append(list, r.help)
	}
	if open != nil {
		list = append(list, open)
	}
	byName := make(map[string]*tools.Tool, len(list))
	kept := make([]*tools.Tool, 0, len(list))
	clashed := map[string]bool{}
	for _, t := range list {
		if t == nil {
			return errors.New("agent: nil tool given with WithTools")
		}
		name := t.Name()
		prev, dup := byName[name]
		switch {
		case !dup:
			byName[name] = t
			kept = append(kept, t)
			continue
		case r.isEnvTool(t):
		case r.isEnvTool(prev):
			// An environment gives way to any other tool of its name:
			// a spec file, even one the model wrote, must not take a
			// tool from the run, nor end it.
			kept[slices.Index(kept, prev)] = t
			byName[name] = t
		default:
			return fmt.Errorf("agent: two tools are named %q (the prompt, an environment, WithTools or help); rename one", name)
		}
		clashed[name] = true
		if !r.clashed[name] {
			r.tellClash(name)
		}
	}
	list, r.clashed = kept, clashed
	if r.bridge != nil {
		// Opened sections' tools are called through use_tool.
		list = slices.DeleteFunc(list, r.bridged)
	}
	if r.a.cfg.Disclosure == DisclosureAppend {
		// Keep the order of the run's start; tools offered later go last.
		if r.rank == nil {
			r.rank = map[string]int{}
		}
		for _, t := range list {
			if _, ok := r.rank[t.Name()]; !ok {
				r.rank[t.Name()] = len(r.rank)
			}
		}
		slices.SortStableFunc(list, func(x, y *tools.Tool) int { return cmp.Compare(r.rank[x.Name()], r.rank[y.Name()]) })
	}
	r.offered, r.byName = list, byName
	return nil
}

// isEnvTool reports whether t is an environment's command tool.
func (r *run) isEnvTool(t *tools.Tool) bool {
	e, ok := r.a.envTool[t.Name()]
	return ok && e == t
}

// tellClash records that the environment called name is not offered,
// another tool having its name, naming its spec file.
func (r *run) tellClash(name string) {
	what := "the environment " + name
	if o := r.a.cfg.Orchestrator; o != nil {
		if f := o.SpecFile(name); f != "" {
			what += " (" + f + ")"
		}
	}
	msg := fmt.Sprintf("%s is not offered: another tool is named %s (the prompt's, an MCP server's, or one the front end offers); rename the environment", what, name)
	r.record(Record{Kind: KindError, Error: msg})
	r.progress(Progress{Kind: "skipped", Detail: msg})
}

// toolDefs returns the offered tools as the model API wants them.
func (r *run) toolDefs() []ToolDef {
	defs := make([]ToolDef, len(r.offered))
	for i, t := range r.offered {
		defs[i] = toolDef(t)
	}
	return defs
}

func toolDef(t *tools.Tool) ToolDef {
	return ToolDef{Name: t.Name(), Description: t.Description(), Parameters: t.InputSchema()}
}

func (r *run) toolNames() []string {
	names := make([]string, len(r.offered))
	for i, t := range r.offered {
		names[i] = t.Name()
	}
	return names
}

// request builds the next request to the model.
func (r *run) request(withTools bool) Request {
	req := Request{Messages: r.msgs, OnDelta: r.a.cfg.OnDelta}
	if withTools {
		req.Tools = r.toolDefs()
		req.Deferred = r.deferred
	}
	return req
}

// complete calls the model once.
func (r *run) complete(withTools bool) (Response, error) {
	req := r.request(withTools)
	req.OnRetry = func(rt Retry) {
		r.record(Record{Kind: KindError, Error: fmt.Sprintf("retrying in %s: %s", rt.Delay, rt.Reason)})
		r.progress(Progress{Kind: "retry", Retry: &rt, Detail: rt.Reason})
	}
	lay := r.layoutOf(req)
	if o := r.a.cfg.Orchestrator; o != nil && r.screens != nil {
		// The request carries the screens (or says they are unchanged):
		// they count as shown, as the screens of serve's responses do,
		// so that the editor takes an edit of lines the model now sees.
		o.Screens()
	}
	r.progress(Progress{Kind: "request"})
	t0 := r.a.cfg.Now()
	resp, err := r.a.cfg.Model.Complete(r.ctx, req)
	took := r.a.cfg.Now().Sub(t0)
	if err != nil {
		r.record(Record{Kind: KindError, Error: err.Error(), ElapsedMS: ms(took)})
		if ctxErr := r.ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return resp, fmt.Errorf("agent: model: %w: %w", ctxErr, err)
		}
		if errors.Is(err, ErrOutputLimit) {
			return resp, fmt.Errorf("%w (%w): ask for fewer output tokens (the model's max tokens option); if the conversation alone is near the window, start a new run", ErrOutputLimit, err)
		}
		if errors.Is(err, ErrContextWindow) {
			return resp, fmt.Errorf("%w (%w): resuming this conversation sends it again; start a new run, with a smaller budget for the system message or a task that reads fewer or smaller tool results", ErrContextWindow, err)
		}
		return resp, fmt.Errorf("agent: model: %w", err)
	}
	resp.Message.Role = RoleAssistant
	if resp.Message.Native == nil {
		// A reply kept in its API's own format goes back as it came, its
		// call IDs with it, which the results must then carry.
		uniqueCallIDs(resp.Message.ToolCalls, callIDsOf(r.msgs), nil)
	}
	resp.Usage.RequestTokens, resp.Usage.PrefixTokens = lay.total(), lay.shared(r.layout)
	r.layout = lay
	r.usage = r.usage.Add(resp.Usage)
	r.record(Record{Kind: KindModel, Usage: &resp.Usage, ElapsedMS: ms(took), FinishReason: resp.FinishReason})
	r.progress(Progress{Kind: "model", Success: true, StepUsage: resp.Usage, Detail: r.replyDetail(resp.Message)})
	return resp, nil
}

// replyDetail says what a reply holds, for its progress line: its tool
// calls, or, with text actions, that it is text (the action in it, if
// any, has a line of its own).
func (r *run) replyDetail(m Message) string {
	switch n := len(m.ToolCalls); {
	case r.a.cfg.Actions == ActionsText && n == 0:
		return "a text reply"
	case n == 1:
		return "1 tool call"
	default:
		return fmt.Sprintf("%d tool calls", n)
	}
}

// loop runs steps until an answer, the step limit, or an error.
func (r *run) loop() error {
	if r.a.cfg.Actions == ActionsText {
		return r.textLoop()
	}
	for r.step < r.a.cfg.MaxSteps {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if err := r.tw.err(); err != nil {
			return err
		}
		r.step++
		resp, err := r.complete(true)
		if err != nil {
			return err
		}
		r.add(resp.Message)
		if err := r.stopped(resp); err != nil {
			return err
		}
		if len(resp.Message.ToolCalls) == 0 {
			if resp.Finish == FinishPaused {
				// The provider paused the turn: the reply, sent back as
				// it is, lets the model continue it.
				r.progress(Progress{Kind: "paused", Success: true})
				continue
			}
			if strings.TrimSpace(resp.Message.Content) == "" {
				// Not an answer: providers send such replies (after
				// tool results, or when the context displeases the
				// model). The model is told once; a second in a row
				// ends the run.
				if r.empties++; r.empties == maxEmptyReplies {
					r.progress(Progress{Kind: "stopped", Detail: "empty reply"})
					return fmt.Errorf("%w (no text, no tool calls, finish reason %q), again after it was told so: resume the run to try again, or use another model", ErrEmptyReply, resp.FinishReason)
				}
				r.progress(Progress{Kind: "invalid", Detail: "empty reply"})
				r.record(Record{Kind: KindError, Error: "failed step: the reply was empty"})
				r.add(Message{Role: RoleUser, Content: emptyReply})
				continue
			}
			r.answer = resp.Message.Content
			r.progress(Progress{Kind: "answer", Success: true})
			return nil
		}
		r.empties = 0
		cut, err := r.runCalls(resp.Message.ToolCalls)
		if err != nil {
			return err
		}
		if cut == "" {
			r.cuts = 0
		} else if r.cuts++; r.cuts == maxCutReplies {
			return &StopError{Finish: FinishTruncated, Reason: resp.FinishReason, Call: cut}
		}
		if err := r.refresh(); err != nil {
			return err
		}
		if obs := r.screenUpdate(false); obs != "" {
			r.add(Message{Role: RoleUser, Content: obs})
		}
		r.saveSession() // the events of the refresh
	}
	return fmt.Errorf("%w (%d steps)", ErrStepLimit, r.a.cfg.MaxSteps)
}

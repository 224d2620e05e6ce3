package agent

import (
	"context"
	"encoding/json"
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

	step       int
	expansions int
	usage      Usage
	answer     string
	logSeq     uint64 // session events already in the transcript
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
	end := Record{Kind: KindEnd, Answer: r.answer, Usage: &r.usage, ElapsedMS: ms(res.Elapsed)}
	if err != nil {
		end.Error = err.Error()
	}
	r.record(end)
	if werr := r.tw.err(); werr != nil && err == nil {
		err = fmt.Errorf("agent: transcript: %w", werr)
	}
	return res, err
}

// saveSession copies the session events the transcript lacks into it, in
// the session.WriteLog line format, so a run can resume from the transcript
// alone.
func (r *run) saveSession() {
	if r.tw == nil || r.a.sess.Seq() <= r.logSeq {
		return
	}
	var lines []json.RawMessage
	for _, e := range r.a.sess.Events() {
		if e.Seq <= r.logSeq {
			continue
		}
		line, err := json.Marshal(struct {
			Seq   uint64    `json:"seq"`
			Time  time.Time `json:"time"`
			Type  string    `json:"type"`
			Event any       `json:"event"`
		}{e.Seq, e.Time, e.Type, e.Event})
		if err != nil {
			r.record(Record{Kind: KindError, Error: fmt.Sprintf("session event %d not saved: %v", e.Seq, err)})
			continue
		}
		lines = append(lines, line)
	}
	r.logSeq = r.a.sess.Seq()
	if len(lines) > 0 {
		r.record(Record{Kind: KindSession, Events: lines})
	}
}

// renderOpts returns the options of the stable prompt's render.
func (r *run) renderOpts() []prompt.RenderOption {
	switch cfg := r.a.cfg; {
	case cfg.Budget > 0:
		return []prompt.RenderOption{prompt.WithBudget(cfg.Budget, cfg.Counter)}
	case cfg.Counter != nil:
		return []prompt.RenderOption{prompt.WithTokens(cfg.Counter)}
	}
	return nil
}

// refresh renders both prompts, updates the system message when a section
// opened or closed, and rebuilds the offered tools.
func (r *run) refresh() error {
	a := r.a
	stable, err := a.cfg.Prompt.Render(a.sess, a.fs, r.renderOpts()...)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	r.stable = stable
	if a.screens != nil {
		var opts []prompt.RenderOption
		if a.cfg.Counter != nil {
			opts = append(opts, prompt.WithTokens(a.cfg.Counter))
		}
		sc, err := a.screens.Render(a.sess, a.fs, opts...)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		r.screens = sc
	}
	if err := r.collectTools(); err != nil {
		return err
	}
	sig, modes := signature(stable.Report(), r.screens)
	if sig == r.sysSig {
		return nil
	}
	opened, closed := diffModes(r.modes, modes)
	r.sysSig, r.modes = sig, modes
	text := stable.Text()
	if a.cfg.Actions == ActionsText {
		text += "\n\n" + r.actionInstructions()
	}
	r.msgs[0] = Message{Role: RoleSystem, Content: text}
	rec := RenderRecord{Tokens: stable.Tokens(), Opened: opened, Closed: closed, Report: sectionRecords(stable.Report())}
	if r.screens != nil {
		rec.Screens = sectionRecords(r.screens.Report())
	}
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

// collectTools builds the tools offered this step: the prompt's, the
// environments' sections', a command tool per environment shown in full
// that has none, the extra tools, help, and open_sections last.
func (r *run) collectTools() error {
	var list []*tools.Tool
	hasOpen := false
	addRendered := func(rd *prompt.Rendered) {
		for _, t := range rd.Tools() {
			if t.Name() == prompt.OpenSectionsName {
				hasOpen = true
				continue
			}
			list = append(list, t)
		}
	}
	addRendered(r.stable)
	if r.screens != nil {
		addRendered(r.screens)
		shown := map[string]bool{}
		for _, s := range r.screens.Report() {
			shown[s.Path] = s.Visible && s.Mode == visibility.Full
		}
		o := r.a.cfg.Orchestrator
		for _, name := range o.Names() {
			key := strings.ToLower(name)
			if !shown[key] || r.screens.Tool(name) != nil {
				continue
			}
			list = append(list, r.a.envTool[name])
		}
	}
	list = append(list, r.a.cfg.Tools...)
	if r.help != nil {
		list = append(list, r.help)
	}
	if hasOpen {
		list = append(list, openSectionsDef)
	}
	byName := make(map[string]*tools.Tool, len(list))
	for _, t := range list {
		if t == nil {
			return errors.New("agent: nil tool in Config.Tools")
		}
		if _, dup := byName[t.Name()]; dup {
			return fmt.Errorf("agent: two tools are named %q (the prompt, an environment, Config.Tools or help); rename one", t.Name())
		}
		byName[t.Name()] = t
	}
	r.offered, r.byName = list, byName
	return nil
}

// openSectionsDef stands for open_sections in the offered list; calls are
// routed to the prompt that owns each key.
var openSectionsDef = tools.MustNew(prompt.OpenSectionsName,
	"Open summarized sections of this prompt. Sections that offer tools are expanded in place and their tools become available; content-only sections are written to context/<key>.md for you to read.",
	func(context.Context, tools.Context, prompt.OpenSectionsInput) (prompt.OpenSectionsResult, error) {
		return prompt.OpenSectionsResult{}, errors.New("open_sections is routed by the agent")
	})

// toolDefs returns the offered tools as the model API wants them.
func (r *run) toolDefs() []ToolDef {
	defs := make([]ToolDef, len(r.offered))
	for i, t := range r.offered {
		defs[i] = ToolDef{Name: t.Name(), Description: t.Description(), Parameters: t.InputSchema()}
	}
	return defs
}

func (r *run) toolNames() []string {
	names := make([]string, len(r.offered))
	for i, t := range r.offered {
		names[i] = t.Name()
	}
	return names
}

// complete calls the model once.
func (r *run) complete(withTools bool) (Response, error) {
	req := Request{Messages: r.msgs, OnDelta: r.a.cfg.OnDelta}
	if withTools {
		req.Tools = r.toolDefs()
	}
	t0 := r.a.cfg.Now()
	resp, err := r.a.cfg.Model.Complete(r.ctx, req)
	took := r.a.cfg.Now().Sub(t0)
	if err != nil {
		r.record(Record{Kind: KindError, Error: err.Error(), ElapsedMS: ms(took)})
		if ctxErr := r.ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return resp, fmt.Errorf("agent: model: %w: %w", ctxErr, err)
		}
		return resp, fmt.Errorf("agent: model: %w", err)
	}
	resp.Message.Role = RoleAssistant
	r.usage = r.usage.Add(resp.Usage)
	r.record(Record{Kind: KindModel, Usage: &resp.Usage, ElapsedMS: ms(took), FinishReason: resp.FinishReason})
	r.progress(Progress{Kind: "model", Success: true, Detail: fmt.Sprintf("%d tool calls", len(resp.Message.ToolCalls))})
	return resp, nil
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
		r.step++
		resp, err := r.complete(true)
		if err != nil {
			return err
		}
		r.add(resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			r.answer = resp.Message.Content
			r.progress(Progress{Kind: "answer", Success: true})
			return nil
		}
		for i, c := range resp.Message.ToolCalls {
			res, err := r.call(c.Name, c.Arguments, c.ID)
			r.add(Message{Role: RoleTool, ToolCallID: c.ID, Content: resultText(res)})
			if err != nil {
				// Answer the calls that will not run, so the conversation
				// stays valid for a resume.
				for _, rest := range resp.Message.ToolCalls[i+1:] {
					r.add(Message{Role: RoleTool, ToolCallID: rest.ID, Content: notRun})
				}
				return err
			}
		}
		if err := r.refresh(); err != nil {
			return err
		}
		if obs := r.screenUpdate(false); obs != "" {
			r.add(Message{Role: RoleUser, Content: obs})
		}
		r.saveSession()
	}
	return fmt.Errorf("%w (%d steps)", ErrStepLimit, r.a.cfg.MaxSteps)
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

// timed runs f as the call of a tool, recording it and its timing.
func (r *run) timed(name, args, id string, f func() (tools.Result, error)) (tools.Result, error) {
	t0 := r.a.cfg.Now()
	res, err := f()
	took := r.a.cfg.Now().Sub(t0)
	tr := ToolRecord{ID: id, Name: name, Arguments: args, Success: res.Success, Result: res.Message}
	if err != nil {
		tr.Error = err.Error()
	}
	r.record(Record{Kind: KindTool, Tool: &tr, ElapsedMS: ms(took)})
	r.progress(Progress{Kind: "tool", Tool: name, Success: res.Success && err == nil})
	return res, err
}

func (r *run) dispatch(name, args string) (tools.Result, error) {
	t, ok := r.byName[name]
	if !ok {
		return tools.Result{Message: fmt.Sprintf("Unknown tool: %s. Available tools: %s.", name, strings.Join(r.toolNames(), ", "))}, nil
	}
	if name == prompt.OpenSectionsName {
		return r.openSections(args)
	}
	if r.a.cfg.DryRun && t != r.help {
		return dryRun(name, args), nil
	}
	return r.runTool(name, t, args)
}

// runTool calls t. A Go error from the tool is an expansion to apply, or
// the end of the run.
func (r *run) runTool(name string, t *tools.Tool, args string) (tools.Result, error) {
	res, err := t.Call(r.ctx, r.toolContext(), json.RawMessage(args))
	if err != nil {
		if r.ctx.Err() != nil {
			return res, fmt.Errorf("agent: tool %s: %w", name, err)
		}
		if errors.Is(err, prompt.ErrVisibilityExpansion) {
			return r.expand(err, nil)
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

func (r *run) toolContext() tools.Context {
	return tools.Context{Session: r.a.sess, FS: r.a.fs}
}

// openSections routes an open_sections call to the prompt that owns each
// key: the stable prompt or the environments'.
func (r *run) openSections(args string) (tools.Result, error) {
	owners := []*prompt.Rendered{r.stable}
	templates := []*prompt.Template{r.a.cfg.Prompt.Template()}
	if r.screens != nil {
		owners = append(owners, r.screens)
		templates = append(templates, r.a.screens.Template())
	}
	anyTool := func() *tools.Tool {
		for _, o := range owners {
			if t := o.Tool(prompt.OpenSectionsName); t != nil {
				return t
			}
		}
		return nil
	}
	var in prompt.OpenSectionsInput
	if json.Unmarshal([]byte(args), &in) != nil || len(in.SectionKeys) == 0 || len(owners) == 1 {
		// The prompt's own tool gives the exact message for bad input.
		return r.callOpen(anyTool(), args)
	}
	groups := make([][]string, len(owners))
	for _, key := range in.SectionKeys {
		owner := -1
		for i, t := range templates {
			if _, ok := t.Section(key); ok {
				owner = i
				break
			}
		}
		if owner < 0 {
			return tools.Result{Message: fmt.Sprintf("Section '%s' does not exist in this prompt.", key)}, nil
		}
		groups[owner] = append(groups[owner], key)
	}
	var written []string
	var expansion error
	for i, keys := range groups {
		if len(keys) == 0 {
			continue
		}
		t := owners[i].Tool(prompt.OpenSectionsName)
		if t == nil {
			return tools.Result{Message: fmt.Sprintf("Section '%s' is already expanded.", keys[0])}, nil
		}
		sub, _ := json.Marshal(prompt.OpenSectionsInput{SectionKeys: keys, Reason: in.Reason})
		res, err := t.Call(r.ctx, r.toolContext(), sub)
		switch {
		case errors.Is(err, prompt.ErrVisibilityExpansion):
			expansion = errors.Join(expansion, err)
		case err != nil:
			return res, fmt.Errorf("agent: open_sections: %w", err)
		case !res.Success:
			return res, nil
		default:
			if out, ok := res.Value.(prompt.OpenSectionsResult); ok {
				written = append(written, out.WrittenFiles...)
			}
		}
	}
	if expansion != nil {
		return r.expand(expansion, written)
	}
	return tools.Result{Success: true, Message: prompt.OpenSectionsResult{WrittenFiles: written}.String(), Value: prompt.OpenSectionsResult{WrittenFiles: written}}, nil
}

func (r *run) callOpen(t *tools.Tool, args string) (tools.Result, error) {
	if t == nil {
		return tools.Result{Message: "Nothing in this prompt is summarized: there is no section to open."}, nil
	}
	res, err := t.Call(r.ctx, r.toolContext(), json.RawMessage(args))
	if errors.Is(err, prompt.ErrVisibilityExpansion) {
		return r.expand(err, nil)
	}
	if err != nil {
		return res, fmt.Errorf("agent: open_sections: %w", err)
	}
	return res, nil
}

// expand applies the overrides an open_sections call asked for, renders
// again and answers the call with what opened and the tools now offered.
func (r *run) expand(err error, written []string) (tools.Result, error) {
	r.expansions++
	if r.expansions > MaxExpansions {
		return tools.Result{Message: ErrExpansionLimit.Error()}, ErrExpansionLimit
	}
	var paths, keys []string
	var reason string
	for _, e := range flatten(err) {
		var ve *prompt.VisibilityExpansionError
		if !errors.As(e, &ve) {
			continue
		}
		if aerr := prompt.ApplyExpansion(r.a.sess, ve); aerr != nil {
			return tools.Result{Message: aerr.Error()}, fmt.Errorf("agent: %w", aerr)
		}
		paths = append(paths, ve.Paths()...)
		keys = append(keys, ve.Keys...)
		reason = ve.Reason
	}
	if rerr := r.refresh(); rerr != nil {
		return tools.Result{Message: rerr.Error()}, rerr
	}
	r.record(Record{Kind: KindExpansion, Expansion: &ExpansionRecord{Keys: keys, Paths: paths, Reason: reason, Count: r.expansions}})
	r.progress(Progress{Kind: "expansion", Success: true, Detail: strings.Join(keys, ", ")})
	msg := fmt.Sprintf("Opened sections: %s. Tools now offered: %s.", strings.Join(paths, ", "), strings.Join(r.toolNames(), ", "))
	if len(written) > 0 {
		msg += " " + prompt.OpenSectionsResult{WrittenFiles: written}.String()
	}
	return tools.Result{Success: true, Message: msg}, nil
}

// flatten lists the errors a join holds, or err itself.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// notRun answers a tool call the run stopped before running.
const notRun = "This call did not run: the run stopped before it. Call it again if it is still needed."

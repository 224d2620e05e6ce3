package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// DefaultMaxSteps is the step limit without [WithMaxSteps].
const DefaultMaxSteps = 20

// MaxExpansions is how many tool-bearing section openings one run may apply;
// one more fails the run with ErrExpansionLimit.
const MaxExpansions = 10

// ErrExpansionLimit fails a run that asked to open tool-bearing sections
// more than MaxExpansions times. Its text is the one the original
// caller loop of open_sections used.
var ErrExpansionLimit = fmt.Errorf("Visibility expansion retries exceeded (%d)", MaxExpansions)

// ErrStepLimit is matched by the error of a run that reached its step limit
// without a final answer.
var ErrStepLimit = errors.New("agent: step limit reached without a final answer")

// ErrEmptyReply is matched by the error of a run whose model sent replies
// with no text and no tool calls, again after it was told the first was
// empty.
var ErrEmptyReply = errors.New("agent: the model's reply was empty")

// ErrContextWindow is matched by the error of a run whose request the
// model's API refused for its size: the conversation no longer fits the
// model's context window (OpenAI's context_length_exceeded, the Messages
// API's "prompt is too long"), or the request is past the API's size
// limit (413). Every request carries the whole conversation, so resuming
// it sends the same request again, and more: a run continues in a new
// conversation, with a smaller budget for the system message
// ([WithBudget]) or a task that reads fewer or smaller tool results. A
// [Model] reports the refusal with an error for which errors.Is(err,
// ErrContextWindow) holds.
var ErrContextWindow = errors.New("agent: the conversation is longer than the model's context window")

// ErrOutputLimit is matched by the error of a run whose request the
// model's API refused because the output limit it asked for, with the
// conversation, does not fit the model's context window: a message that
// names the limit (vLLM's "'max_tokens' or 'max_completion_tokens' is too
// large", OpenAI's "... in the completion", the Messages API's "input
// length and `max_tokens` exceed context limit"). Such a refusal can come
// on a run's first request; a smaller output limit is the fix, or, when
// the conversation alone is near the window, a new run. A [Model]
// reports it with an error for which errors.Is(err, ErrOutputLimit)
// holds, and not [ErrContextWindow].
var ErrOutputLimit = errors.New("agent: the output limit and the conversation do not fit the model's context window")

// ActionMode says how the model acts; [ParseActionMode] reads one by name.
type ActionMode int

const (
	// ActionsNative offers tools through the model API's tool calling.
	ActionsNative ActionMode = iota
	// ActionsText describes the tools in the system message and reads one
	// action per reply from the text: a fenced block named after an
	// environment, or a JSON object {"tool": ..., "input": ...} or
	// {"final": ...}.
	ActionsText
)

// String returns "native" or "text".
func (m ActionMode) String() string {
	if m == ActionsText {
		return "text"
	}
	return "native"
}

// ParseActionMode reads "native" or "text".
func ParseActionMode(s string) (ActionMode, error) {
	switch s {
	case "native", "":
		return ActionsNative, nil
	case "text":
		return ActionsText, nil
	}
	return 0, fmt.Errorf("agent: unknown action mode %q: want native or text", s)
}

// config is what an Agent runs with: the model, the prompt and the
// options.
type config struct {
	Model        Model
	Prompt       *prompt.Prompt
	Session      *session.Session
	FS           afero.Fs
	Budget       int
	Counter      tokens.Counter
	Orchestrator *orchestrator.Orchestrator
	Tools        []*tools.Tool
	Help         bool
	MaxSteps     int
	Actions      ActionMode
	Transcript   io.Writer
	DryRun       bool
	OnDelta      func(Delta)
	OnProgress   func(Progress)
	Now          func() time.Time
	Disclosure   Disclosure
	Price        *Price
	NoBridge     bool
	ChangesAt    uint64                         // WithPromptChanges
	Changes      func() uint64                  // WithPromptChanges
	Rebuild      func() (*prompt.Prompt, error) // WithPromptChanges
}

// Option configures an [Agent]: [WithSession], [WithFS], [WithBudget] and
// [WithCounter], [WithOrchestrator], [WithTools], [WithToolBridge],
// [WithHelp], [WithMaxSteps], [WithActions], [WithTranscript],
// [WithDryRun], [WithOnDelta], [WithOnProgress] (each [Progress] of a
// run, for display), [WithDisclosure], [WithPrice], [WithClock] and
// [WithPromptChanges].
type Option func(*config)

// WithSession sets the session that holds visibility overrides and
// environment usage (default: a new one). With [WithOrchestrator], it must
// be the orchestrator's session, which is also the default then.
func WithSession(sess *session.Session) Option {
	return func(c *config) { c.Session = sess }
}

// WithFS sets where open_sections writes context files and what tools get
// (default: none). For a directory on disk, a
// [github.com/unfold-dev/unfold/rootfs.FS] keeps every read and write
// inside it, symbolic links included.
func WithFS(fs afero.Fs) Option {
	return func(c *config) { c.FS = fs }
}

// WithBudget bounds the system message to budget tokens counted by counter
// (0: no budget).
func WithBudget(budget int, counter tokens.Counter) Option {
	return func(c *config) { c.Budget, c.Counter = budget, counter }
}

// WithCounter counts the tokens of every render for the transcript, without
// a budget.
func WithCounter(counter tokens.Counter) Option {
	return func(c *config) { c.Counter = counter }
}

// WithPromptChanges follows a prompt whose sections change while a run
// goes on, such as one holding the section of a
// [github.com/unfold-dev/unfold/gateway.Gateway], whose servers may list
// their tools late or change them: changes counts the changes (the
// gateway's Changes), at is its count read before the prompt given to
// [New] was built, and build builds the prompt again. When the count
// moved, before each step and before a tool call's sections open, the new
// prompt replaces the old one with the session's openings kept, so that
// the keys a tool asks to open are there. On an error the run goes on
// with the prompt as it was, until the next change.
func WithPromptChanges(at uint64, changes func() uint64, build func() (*prompt.Prompt, error)) Option {
	return func(c *config) { c.ChangesAt, c.Changes, c.Rebuild = at, changes, build }
}

// WithOrchestrator adds a section per environment, rendered into the newest
// message, each carrying its environment's command tool.
func WithOrchestrator(o *orchestrator.Orchestrator) Option {
	return func(c *config) { c.Orchestrator = o }
}

// WithTools offers tools on every step besides the prompt's.
func WithTools(ts ...*tools.Tool) Option {
	return func(c *config) { c.Tools = append(c.Tools, ts...) }
}

// WithToolBridge sets whether, with [DisclosureAppend] and native tool
// calls, a model whose API has no deferred tools (Features.DefersTools
// false) calls the tools of sections opened during the run through one
// tool offered from the start, [UseToolName], each opening listing its
// tools with their input schemas (the default, on); or gets them added at
// the end of its tool list (off). Providers lay the tool list out before
// the system message, so a list that grows leaves only the tools before
// it in the cached prefix; with the bridge the list never changes.
func WithToolBridge(on bool) Option {
	return func(c *config) { c.NoBridge = !on }
}

// WithHelp offers the help tool (tools.NewHelp) describing what the prompt
// offers.
func WithHelp() Option {
	return func(c *config) { c.Help = true }
}

// WithMaxSteps bounds the model calls of a run (default [DefaultMaxSteps]).
func WithMaxSteps(n int) Option {
	return func(c *config) { c.MaxSteps = n }
}

// WithActions sets how the model acts (default [ActionsNative]).
func WithActions(m ActionMode) Option {
	return func(c *config) { c.Actions = m }
}

// WithTranscript writes the run to w as JSON lines (see [Record]).
func WithTranscript(w io.Writer) Option {
	return func(c *config) { c.Transcript = w }
}

// WithDryRun runs no tool and no command: each call is answered with what
// would have run. help and open_sections still work, the latter writing
// into an in-memory layer over the filesystem.
func WithDryRun() Option {
	return func(c *config) { c.DryRun = true }
}

// WithOnDelta receives the model's replies as they stream.
func WithOnDelta(f func(Delta)) Option {
	return func(c *config) { c.OnDelta = f }
}

// WithOnProgress is told about each model call and tool call as the run
// goes.
func WithOnProgress(f func(Progress)) Option {
	return func(c *config) { c.OnProgress = f }
}

// WithDisclosure sets where opened sections reach the model (default
// [DisclosureDefault]).
func WithDisclosure(d Disclosure) Option {
	return func(c *config) { c.Disclosure = d }
}

// WithPrice estimates what each run cost at p ([Result.Cost], and the
// transcript's end record).
func WithPrice(p Price) Option {
	return func(c *config) { c.Price = &p }
}

// WithClock sets the clock for timings and the transcript (default
// time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.Now = now }
}

// Progress is one thing a run did, for display.
type Progress struct {
	Step      int           `json:"step"`
	Kind      string        `json:"kind"` // "request", "retry", "model", "paused", "tool", "expansion", "invalid", "skipped", "answer", "stopped"
	Tool      string        `json:"tool,omitempty"`
	Success   bool          `json:"success"`
	Detail    string        `json:"detail,omitempty"`
	Retry     *Retry        `json:"retry,omitempty"` // the retry, for "retry"
	StepUsage Usage         `json:"step_usage"`      // of this model call, for "model"
	Usage     Usage         `json:"usage"`           // of the run so far
	Elapsed   time.Duration `json:"elapsed"`         // since the run started
}

// Result is what a run produced.
type Result struct {
	Answer     string
	Steps      int
	Expansions int
	Usage      Usage
	// Cost is what the run cost at the price given with [WithPrice], in
	// US dollars; 0 without one.
	Cost     float64
	Elapsed  time.Duration
	Messages []Message // the conversation, system message first
}

// Agent runs a model over a prompt. It is safe to run several times, one run
// at a time per session.
type Agent struct {
	cfg  config
	sess *session.Session
	fs   afero.Fs // cfg.FS, behind an in-memory layer in dry-run
	// disc renders the prompt (part 0) and, with environments, their
	// sections (part 1), and opens their sections.
	disc      *prompt.Disclosure
	screens   bool                   // disc has the environments' part
	envTool   map[string]*tools.Tool // each environment's command tool, for text mode
	envGen    uint64                 // the orchestrator's generation the environments were taken at
	promptGen uint64                 // the count of WithPromptChanges the prompt was built at
}

// New returns an agent that runs model over the prompt p (its stable
// part: instructions, reference, help). With [WithOrchestrator], the
// environment sections are built here: register environments first.
func New(model Model, p *prompt.Prompt, opts ...Option) (*Agent, error) {
	cfg := config{Model: model, Prompt: p}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Model == nil {
		return nil, errors.New("agent: new: no model")
	}
	if cfg.Prompt == nil {
		return nil, errors.New("agent: new: no prompt")
	}
	if cfg.MaxSteps < 0 {
		return nil, fmt.Errorf("agent: new: max steps %d: want a positive number, or 0 for %d", cfg.MaxSteps, DefaultMaxSteps)
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Budget < 0 || (cfg.Budget > 0 && cfg.Counter == nil) {
		return nil, errors.New("agent: new: a budget needs a positive token count and a counter")
	}
	if cfg.Actions != ActionsNative && cfg.Actions != ActionsText {
		return nil, fmt.Errorf("agent: new: unknown action mode %d", cfg.Actions)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if (cfg.Changes == nil) != (cfg.Rebuild == nil) {
		return nil, errors.New("agent: new: WithPromptChanges needs both the count of changes and the build")
	}
	if cfg.Disclosure < DisclosureDefault || cfg.Disclosure > DisclosureAppend {
		return nil, fmt.Errorf("agent: new: unknown disclosure %d", cfg.Disclosure)
	}
	if cfg.Disclosure == DisclosureDefault {
		cfg.Disclosure = DisclosureRerender
		if featuresOf(cfg.Model).CachesPrefixes {
			cfg.Disclosure = DisclosureAppend
		}
	}
	a := &Agent{cfg: cfg, sess: cfg.Session, fs: cfg.FS, envTool: map[string]*tools.Tool{}}
	a.promptGen = cfg.ChangesAt
	parts := []prompt.Part{{Prompt: cfg.Prompt, Options: stableOptions(cfg)}}
	if o := cfg.Orchestrator; o != nil {
		if a.sess == nil {
			a.sess = o.Session()
		}
		if os := o.Session(); os == nil || os != a.sess {
			return nil, errors.New("agent: new: the orchestrator needs the agent's session: create it with orchestrator.WithSession(sess) and give the same session with WithSession")
		}
		envs, err := a.takeEnvs()
		if err != nil {
			return nil, fmt.Errorf("agent: new: %w", err)
		}
		if envs.screens != nil {
			parts = append(parts, envs.part(cfg))
		}
		a.keepEnvs(envs)
	}
	if a.sess == nil {
		a.sess = session.New()
	}
	if err := visibility.Register(a.sess); err != nil {
		return nil, fmt.Errorf("agent: new: %w", err)
	}
	// Failed tool calls are recorded in the session; a resumed run
	// replays them.
	if err := tools.RegisterEvents(a.sess); err != nil {
		return nil, fmt.Errorf("agent: new: %w", err)
	}
	if cfg.DryRun && a.fs != nil {
		a.fs = afero.NewCopyOnWriteFs(afero.NewReadOnlyFs(a.fs), afero.NewMemMapFs())
	}
	var dopts []prompt.DisclosureOption
	if cfg.Disclosure == DisclosureAppend {
		dopts = append(dopts, prompt.WithContentAnswers())
	}
	disc, err := prompt.NewDisclosure(a.sess, a.fs, parts, dopts...)
	if err != nil {
		return nil, fmt.Errorf("agent: new: %w", err)
	}
	a.disc = disc
	return a, nil
}

// stableOptions returns the options of the prompt's render: the budget, or
// a counter for the transcript.
func stableOptions(cfg config) []prompt.RenderOption {
	switch {
	case cfg.Budget > 0:
		return []prompt.RenderOption{prompt.WithBudget(cfg.Budget, cfg.Counter)}
	case cfg.Counter != nil:
		return []prompt.RenderOption{prompt.WithTokens(cfg.Counter)}
	}
	return nil
}

// Disclosure returns where opened sections reach the model in this
// agent's runs: the mode given with [WithDisclosure], the default
// resolved.
func (a *Agent) Disclosure() Disclosure { return a.cfg.Disclosure }

// Session returns the session the agent renders with.
func (a *Agent) Session() *session.Session { return a.sess }

// Run runs task from a fresh conversation until the model answers without
// acting, the step limit is reached (ErrStepLimit), a reply the model did
// not finish ends it (*StopError), its replies are empty (ErrEmptyReply)
// or ctx ends. The result holds what was
// done even when the error is not nil.
func (a *Agent) Run(ctx context.Context, task string) (*Result, error) {
	if strings.TrimSpace(task) == "" {
		return nil, errors.New("agent: run: empty task; say what the agent should do")
	}
	r, err := a.newRun(ctx)
	if err != nil {
		return nil, err
	}
	r.record(Record{Kind: KindRun, Task: task, Actions: a.cfg.Actions.String(), Disclosure: a.cfg.Disclosure.String()})
	note, err := r.begin()
	if err != nil {
		return r.finish(err)
	}
	first := task
	if note != "" {
		first += "\n\n" + note
	}
	if obs := r.screenUpdate(true); obs != "" {
		first += "\n\n" + obs
	}
	r.add(Message{Role: RoleUser, Content: first})
	return r.finish(r.loop())
}

// Resume continues the conversation a transcript holds (that of its last
// run that was not a resume, [Transcript.Messages]): it replays the
// session events the transcript saved ([Transcript.SessionLog]) into the
// agent's session (which must not have events of its own yet, see
// session.ReplayLog), restores the messages and goes on. Events of a type
// this agent's session has no name for (recorded by an environment the
// run that saved them had and this one has not) are kept as they were
// (session.KeepUnknownEvents): saved again, and applied if an environment
// that names them is loaded later. A non-empty
// followUp is added as a user message. A tool call the transcript left
// without a result is answered after its reply's results: as not run when
// it never started, and as possibly done when it was running when the run
// stopped (its call record is there, its result is not). Sections the
// saved session opened that do not fit the budget are closed, the most
// recently opened first ([prompt.Disclosure.Refit]), and the model is told.
// The run's records continue those read: the transcript written
// ([WithTranscript]) must be the one read, or a copy of it from
// [Transcript.Start], to resume again. A transcript with no run, or whose
// first run is itself a resume (its conversation is in another file), is
// refused. Resumed with [ActionsText], the tool calls of a run with
// native actions become text actions, and their results observations.
func (a *Agent) Resume(ctx context.Context, tr *Transcript, followUp string) (*Result, error) {
	if tr == nil {
		return nil, errors.New("agent: resume: nil transcript")
	}
	if err := tr.resumable(); err != nil {
		return nil, fmt.Errorf("agent: resume: transcript: %w", err)
	}
	if log := tr.SessionLog(); len(log) > 0 {
		// An event of a type this run has no name for (one an
		// environment records that this run did not load) is kept as
		// it was, to be saved again, and applies when the type is
		// named.
		if err := a.sess.ReplayLog(strings.NewReader(log), session.KeepUnknownEvents()); err != nil {
			return nil, fmt.Errorf("agent: resume: %w", err)
		}
	}
	r, err := a.newRun(ctx)
	if err != nil {
		return nil, err
	}
	r.record(Record{Kind: KindRun, Task: followUp, Actions: a.cfg.Actions.String(), Disclosure: a.cfg.Disclosure.String(), Resumed: true})
	note, err := r.begin()
	if err != nil {
		return r.finish(err)
	}
	// The restored messages are in the transcript already (or in its
	// copy): they are not recorded again.
	// Every tool call must have a result before the conversation goes on:
	// the calls the stopped run left open are answered in place.
	msgs, added := tr.resumed()
	sent := msgs
	if a.cfg.Actions == ActionsText {
		// Text mode sends no tools, and an API may refuse tool calls
		// and results in a request without them.
		sent = textActions(msgs)
	}
	for i, m := range sent {
		if added[i] {
			// Recorded as made, a tool message for a call, so that a
			// later resume finds the call answered.
			orig := msgs[i]
			r.record(Record{Kind: KindMessage, Message: &orig})
		}
		r.msgs = append(r.msgs, m)
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(followUp))
	for _, s := range []string{note, r.screenUpdate(false)} {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	if b.Len() > 0 {
		r.add(Message{Role: RoleUser, Content: b.String()})
	} else if n := len(r.msgs); n == 1 || r.msgs[n-1].Role == RoleAssistant {
		r.add(Message{Role: RoleUser, Content: "Continue."})
	}
	return r.finish(r.loop())
}

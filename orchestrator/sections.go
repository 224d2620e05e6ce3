package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/internal/markdown"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tools"
	"github.com/unfold-dev/unfold/visibility"
)

// SectionKey returns the prompt-section key of the environment called name:
// the name in lower case. It fails for names that make no valid key (one
// starting with an underscore, or longer than 64 characters).
func SectionKey(name string) (string, error) {
	key := strings.ToLower(name)
	if err := section.ValidKey(key); err != nil {
		return "", fmt.Errorf("environment %s has no valid section key: %w; rename it", name, err)
	}
	return key, nil
}

// Sections returns a prompt section per environment, in name order, plus an
// [ScreenName] section listing spec files that failed to load, when any did.
//
// An environment's section has the key [SectionKey], the title given with
// [Title] (default: the name), a live body (the truncated screen of the
// environment of that name, read at every render as an
// [Orchestrator.Preview], so that it follows spec files that change) and
// a one-line summary: the environment's [envs.Summarizer] summary, or the
// [Description], or "<name> environment". The summary is read when
// Sections is called. Sections render in full,
// unless a token budget demotes them; an environment registered [OnDemand]
// renders its summary until the session records a command in it (the
// session given with [WithSession] must be the one the prompt renders with)
// or the model opens it with open_sections. The section's tools (its command
// tool, [Orchestrator.CommandTool], and any given with [Tools]) are offered
// only while it renders in full.
func (o *Orchestrator) Sections() ([]*section.Section, error) {
	o.mu.RLock()
	list := make([]*entry, 0, len(o.names))
	for _, n := range o.names {
		list = append(list, o.envs[n])
	}
	hasLoadErrs := len(o.loadErrs) > 0
	o.mu.RUnlock()

	var errs []error
	keys := make(map[string]string, len(list)+1)
	keys[ScreenName] = ScreenName
	out := make([]*section.Section, 0, len(list)+1)
	for _, e := range list {
		key, err := SectionKey(e.name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := keys[key]; dup {
			errs = append(errs, fmt.Errorf("environments %s and %s have the same section key %q; rename one", other, e.name, key))
			continue
		}
		keys[key] = e.name
		s, err := o.envSection(e, key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("orchestrator: sections: %w", err)
	}
	if hasLoadErrs {
		out = append(out, section.New(section.Spec[section.None]{
			Key:   ScreenName,
			Title: "Orchestrator",
			Content: func(section.None) (string, error) {
				return closeFence(Truncate(loadErrorScreen(o.LoadErrors()), o.maxLines)), nil
			},
			Summary: "Some environment spec files failed to load.",
		}))
	}
	return out, nil
}

func (o *Orchestrator) envSection(e *entry, key string) (*section.Section, error) {
	cmd, err := o.commandTool(e)
	if err != nil {
		return nil, err
	}
	ts := append(slices.Clone(e.reg.tools), cmd)
	title := e.reg.title
	if title == "" {
		title = e.name
	}
	name := e.name
	spec := section.Spec[section.None]{
		Key:   key,
		Title: title,
		Content: func(section.None) (string, error) {
			// By name: a spec file that changed since has put a new
			// environment in e's place. A preview: a prompt is rendered
			// more often than it is sent, and the screen that goes back
			// with the environment's own command counts as shown.
			scr, ok := o.Preview(name)
			if !ok {
				return "[" + name + " is gone: its spec file was removed or no longer loads.]", nil
			}
			return closeFence(scr.Content), nil
		},
		Summary: section.Literal(o.summary(e)), // text, not a template
		Tools:   ts,
	}
	if e.reg.onDemand {
		spec.Visibility = visibility.FromSession(func(sess *session.Session) visibility.Mode {
			if GetUsage(sess).Count(name) > 0 {
				return visibility.Full
			}
			return visibility.Summary
		})
	}
	return section.New(spec), nil
}

// Summary returns the one-line summary of the environment called name (see
// [Orchestrator.Sections]).
func (o *Orchestrator) Summary(name string) (string, bool) {
	o.mu.RLock()
	e, ok := o.envs[name]
	o.mu.RUnlock()
	if !ok {
		return "", false
	}
	return o.summary(e), true
}

func (o *Orchestrator) summary(e *entry) string {
	var s string
	if sum, ok := e.env.(envs.Summarizer); ok {
		s = callSummary(sum)
	}
	if s == "" {
		s = e.reg.description
	}
	if s == "" {
		s = e.name + " environment"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// callSummary calls Summary, treating a panic as no summary.
func callSummary(s envs.Summarizer) (line string) {
	defer func() {
		if recover() != nil {
			line = ""
		}
	}()
	return s.Summary()
}

// closeFence closes a code fence the text leaves open (a screen cut short
// in the middle of a code block), so it cannot swallow the rest of the
// prompt.
func closeFence(text string) string {
	n := markdown.OpenFence(text)
	if n == 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	opener := strings.TrimLeft(lines[n-1], " ")
	ch := opener[0]
	width := len(opener) - len(strings.TrimLeft(opener, string(ch)))
	return text + "\n" + strings.Repeat(string(ch), width)
}

// The descriptions of the limit fields of [CommandInput], with what the
// default is in place of %s ("default 120", "default: none"). The struct
// tags cannot be built from them, so they spell them out with the package
// defaults, and TestCommandInputTagsFollowDescriptions holds the two
// together; limitTexts fills in an environment's own defaults.
const (
	timeoutDesc = "Seconds after which control comes back while the command runs on (%s); with hard, the command is interrupted then instead."
	quietDesc   = "Seconds without new output after which control comes back while the command runs on (%s)."
	budgetDesc  = "Tokens the output may take before its middle is left out and the whole output saved to a file (%s)."
)

// CommandInput is the input of an environment's command tool.
type CommandInput struct {
	Command string  `json:"command" description:"The command text, in the environment's own syntax; it may span several lines. While a command runs: empty to wait and see its new output, C-c to interrupt it, C-d to end its input, or text to type to it when it waits for input."`
	Timeout float64 `json:"timeout,omitempty" description:"Seconds after which control comes back while the command runs on (default 120); with hard, the command is interrupted then instead."`
	Hard    bool    `json:"hard,omitempty" description:"Interrupt the command when the timeout passes instead of giving control back."`
	Quiet   float64 `json:"quiet,omitempty" description:"Seconds without new output after which control comes back while the command runs on (default 30)."`
	Budget  int     `json:"budget,omitempty" description:"Tokens the output may take before its middle is left out and the whole output saved to a file (default 8000)."`
}

// CommandOutput is the output of an environment's command tool. The model
// reads the output alone (String): front ends that show screens show them
// their own way.
type CommandOutput struct {
	Output     string `json:"output" description:"What the command printed or returned, with notes in brackets."`
	Success    bool   `json:"success" description:"Whether the command ended and succeeded."`
	Running    bool   `json:"running,omitempty" description:"The command is still running: the next command to this environment continues it."`
	Waiting    bool   `json:"waiting,omitempty" description:"The running command waits for input: the next command's text is typed to it."`
	Prompt     string `json:"prompt,omitempty" description:"The question a waiting command asked (the last line of its output)."`
	Hidden     bool   `json:"hidden,omitempty" description:"The waiting command asks for a secret: the answer is not shown or recorded."`
	OutputFile string `json:"output_file,omitempty" description:"The file holding the whole output, when the output shows only its head and tail."`
	Screen     string `json:"screen" description:"The environment's screen after the command: its state and how to use it."`
}

// String returns the command's output.
func (c CommandOutput) String() string { return c.Output }

// CommandTool returns the tool named after the environment that runs a
// command in it through the orchestrator (so the command is recorded in the
// session, see [Orchestrator.Run]); every environment's prompt section
// carries it. Its input is a [CommandInput], its timeouts at most
// [MaxTimeout] seconds; its hints say what the environment's commands do
// ([Hints], [envs.Hinter]). The same tool is returned at every call. A command
// that fails is a failed result whose message is the output, and whose
// Value is the [CommandOutput] still; a command still running is not a
// failure. It fails for an unknown environment, or one whose name makes no
// tool name.
func (o *Orchestrator) CommandTool(name string) (*tools.Tool, error) {
	o.mu.RLock()
	e, ok := o.envs[name]
	o.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("orchestrator: command tool: %s", o.unknown(name))
	}
	return o.commandTool(e)
}

// CommandTools returns the environments' names in order, the command tool
// of each by name, and the [Orchestrator.Generation] they are of, taken
// together: an environment that a spec file removes meanwhile is in all
// of them or in none.
func (o *Orchestrator) CommandTools() (names []string, byName map[string]*tools.Tool, gen uint64, err error) {
	o.mu.RLock()
	names, gen = slices.Clone(o.names), o.gen
	entries := make([]*entry, len(names))
	for i, name := range names {
		entries[i] = o.envs[name]
	}
	o.mu.RUnlock()
	byName = make(map[string]*tools.Tool, len(names))
	for _, e := range entries {
		t, err := o.commandTool(e)
		if err != nil {
			return nil, nil, gen, err
		}
		byName[e.name] = t
	}
	return names, byName, gen, nil
}

func (o *Orchestrator) commandTool(e *entry) (*tools.Tool, error) {
	e.toolOnce.Do(func() {
		name := e.name
		desc, fields := o.limitTexts(e)
		e.tool, e.toolErr = tools.New(name, desc, func(ctx context.Context, _ tools.Context, in CommandInput) (CommandOutput, error) {
			arrived := time.Now()
			for _, f := range []struct {
				name string
				v    float64
			}{{"timeout", in.Timeout}, {"quiet", in.Quiet}} {
				if f.v < 0 || f.v > MaxTimeout {
					return CommandOutput{}, fmt.Errorf("%s must be more than 0 and at most %d seconds, got %v; omit it for the default", f.name, MaxTimeout, f.v)
				}
			}
			if in.Budget < 0 {
				return CommandOutput{}, fmt.Errorf("budget must be a positive number of tokens, got %d; omit it for the default", in.Budget)
			}
			if in.Hard && in.Timeout == 0 {
				return CommandOutput{}, errors.New("hard needs a timeout: the seconds after which the command is interrupted")
			}
			res := o.run(ctx, Command{
				Environment: name, Text: in.Command,
				Timeout: seconds(in.Timeout), Hard: in.Hard, Quiet: seconds(in.Quiet), Budget: in.Budget,
				Arrived: arrived,
			})
			out := CommandOutput{Output: res.Output, Success: res.Success, Running: res.Running, Waiting: res.Waiting,
				Prompt: res.Prompt, Hidden: res.Hidden, OutputFile: res.OutputFile}
			if scr, ok := o.Screen(name); ok {
				out.Screen = scr.Content
			}
			if !res.Success && !res.Running {
				if res.Output == "" {
					return out, errors.New("The command failed without output.")
				}
				return out, errors.New(res.Output)
			}
			return out, nil
		})
		if e.toolErr == nil && len(fields) > 0 {
			e.tool, e.toolErr = e.tool.WithInputDescriptions(fields)
		}
		if e.toolErr != nil {
			e.toolErr = fmt.Errorf("orchestrator: command tool for %s: %w", name, e.toolErr)
			return
		}
		e.tool = e.tool.WithHints(envHints(e))
	})
	return e.tool, e.toolErr
}

// limitTexts returns the description of e's command tool and, where e's
// own limits (its spec file's, [Limits], [Budget], [WithOutputBudget])
// are not the defaults that [CommandInput] describes, the descriptions
// of its input fields that name them: the model plans long commands by
// them.
func (o *Orchestrator) limitTexts(e *entry) (desc string, fields map[string]string) {
	quiet := cmp.Or(e.reg.limits.Quiet, envs.DefaultQuiet)
	wait := cmp.Or(e.reg.limits.Wait, envs.DefaultWait)
	budget := cmp.Or(e.reg.budget, o.budget, envs.DefaultBudget)
	hard := e.reg.hard && wait > 0
	desc = "Run a command in the " + e.name + " environment and return its output. "
	then := fmt.Sprintf(": then send an empty command to wait, %s to interrupt it, or text to answer it when it waits for input.", envs.Interrupt)
	switch {
	case hard:
		// Only a spec file makes a timeout hard, and its quiet is above 0.
		desc += fmt.Sprintf("A command is interrupted after %v. Control comes back after %v without new output while it runs on%s", wait, quiet, then)
	case quiet > 0:
		desc += fmt.Sprintf("Control comes back after %v without new output, or at the timeout, while the command runs on%s", quiet, then)
	default:
		desc += "Control comes back at the timeout while the command runs on" + then
	}
	desc += " Its section shows its state and the commands it accepts."
	fields = map[string]string{}
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	switch {
	case hard:
		fields["timeout"] = "Seconds after which the command is interrupted: at most " + secs(wait) + " (this environment's limit), the default."
		fields["hard"] = "Interrupt the command when the timeout passes; this environment always does."
	case wait < 0:
		fields["timeout"] = fmt.Sprintf(timeoutDesc, "default: none")
	case wait != envs.DefaultWait:
		fields["timeout"] = fmt.Sprintf(timeoutDesc, "default "+secs(wait))
	}
	switch {
	case quiet < 0:
		fields["quiet"] = fmt.Sprintf(quietDesc, "default: never")
	case quiet != envs.DefaultQuiet:
		fields["quiet"] = fmt.Sprintf(quietDesc, "default "+secs(quiet))
	}
	switch {
	case budget < 0:
		fields["budget"] = fmt.Sprintf(budgetDesc, "default: no bound")
	case budget != envs.DefaultBudget:
		fields["budget"] = fmt.Sprintf(budgetDesc, "default "+strconv.Itoa(budget))
	}
	return desc, fields
}

// envHints is what the environment's commands do, as its registration says,
// else as it says itself ([envs.Hinter]), else [tools.AssumedHints]. An
// environment whose Hints panics is taken to say nothing.
func envHints(e *entry) (h tools.Hints) {
	if e.reg.hints != nil {
		return *e.reg.hints
	}
	hinter, ok := e.env.(envs.Hinter)
	if !ok {
		return tools.AssumedHints
	}
	defer func() {
		if recover() != nil {
			h = tools.AssumedHints
		}
	}()
	return hinter.Hints()
}

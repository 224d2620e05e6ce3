package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/gateway"
	"github.com/unfold-dev/unfold/internal/readfile"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/promptfile"
	"github.com/unfold-dev/unfold/rootfs"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/skills"
)

const agentHelp = `Usage: unfold agent "task" --project DIR [flags]

Run an agent on a task in a project: the model sees the instructions (or the
prompt file given with --prompt) as its system message and the environments'
screens (bash, python, editor, and the project's env/*.json) in its newest
message, runs commands through them and opens summarized sections as it
needs them. Spec files added, changed or removed in DIR/env during the run
(by the model's commands or anyone) reach the model at its next request;
with the editor but neither bash nor python (--builtins editor), they
load only at the start, as a spec file the model wrote would let it run a
program, and changes are reported instead.
Progress goes to stderr, the final answer to stdout.

Skills in DIR/.claude/skills, DIR/.agents/skills and DIR/skills, and in
each --skills DIR, are listed in the system message by name and
description; the model opens one to read its instructions and its files.

Providers (--provider):
  openai     any OpenAI-compatible endpoint: --base-url (or OPENAI_BASE_URL),
             the key in OPENAI_API_KEY; --api chat (chat completions, the
             default) or --api responses (the Responses API)
  anthropic  the Messages API: --base-url (or ANTHROPIC_BASE_URL, default
             https://api.anthropic.com), the key in ANTHROPIC_API_KEY
The model is --model (or UNFOLD_MODEL).

With --disclosure append (the default: these providers cache prompt
prefixes) the system message and the tool list stay as the run started; an
opened section arrives as the answer to open_sections and its tools through
the provider's deferred tools, or (chat completions) through use_tool,
offered from the start. With
--disclosure rerender the system message is rendered again instead.

Requests that get no reply, 429 or a 5xx status, or a stream that opens with
an overload reported in it, are retried with backoff (each retry shown);
--timeout bounds each request. --max-tokens bounds each
reply (Anthropic's max_tokens, 8192 by default; max_completion_tokens for
chat completions, which some OpenAI-compatible servers such as Ollama
ignore (set the limit on the server there), max_output_tokens for the
Responses API, unset by default): a run whose replies are cut at the
limit says so and stops. The run ends with the
tokens it used, the part a prefix cache could serve and what it cost at the
model's list price (--prices FILE overrides the table; a model not in it
has no price).
--transcript FILE records the run as it goes, each tool call as it starts
and as it ends; a write that fails stops the run (an answer already given
is still printed). A last line a stopped run cut short is removed first.
--resume FILE continues the last run in FILE: a call that was running
when that run was killed is reported to the model as possibly done, to
check rather than repeat; the run is appended to FILE, or, with
--transcript OTHER, to OTHER, after a copy of the conversation resumed,
so that OTHER resumes on its own. A file another run writes is refused
(each run locks its transcript). --dry-run prints
the first request and exits: nothing starts, no model is called, nothing
is written. Ctrl-C stops the run (exit status 130); so does a reader of
stdout or stderr gone away (unfold agent ... | head -1), with exit status 1
and a line on the other stream.

MCP servers in DIR/.mcp.json and in --mcp-config files are sections of the
prompt: each shows a summary until the model opens it (or finds its tools
with find_tools), and then offers its tools as SERVER__TOOL.
`

const defaultInstructions = `You are an agent working in the project directory {{.Project}}.
Use the environments below to inspect and change the project: their screens
show their state and the commands they accept. Call the help tool to see
everything on offer, and open summarized sections when you need them.
Work step by step; when the task is done, answer with a short summary of
what you did and found.`

type agentParams struct{ Project string }

// agentFlags are the agent command's flags.
type agentFlags struct {
	project, provider, api, baseURL, model, keyEnv      string
	transcript, resume, actions, promptPath, paramsPath string
	names, disclosure, prices, tokenizer                string
	maxSteps, budget, maxRetries, outputBudget          int
	maxTokens                                           int
	timeout                                             time.Duration
	dryRun, help                                        bool
}

func runAgent(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f agentFlags
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.StringVar(&f.project, "project", ".", "the project `dir`ectory the environments work in")
	fs.StringVar(&f.provider, "provider", "openai", "the model API: openai or anthropic")
	fs.StringVar(&f.api, "api", "chat", "with --provider openai: chat (chat completions) or responses (the Responses API)")
	fs.StringVar(&f.baseURL, "base-url", "", "the endpoint `url` (default $OPENAI_BASE_URL, or $ANTHROPIC_BASE_URL with --provider anthropic)")
	fs.StringVar(&f.model, "model", os.Getenv("UNFOLD_MODEL"), "the model `name` (default $UNFOLD_MODEL)")
	fs.StringVar(&f.keyEnv, "api-key-env", "", "the environment `variable` holding the API key (default OPENAI_API_KEY, or ANTHROPIC_API_KEY)")
	fs.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop after this many model calls")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "bound each model request, its retries and streamed reply included (0: no bound)")
	fs.IntVar(&f.maxRetries, "max-retries", 4, "retry a request that got no reply, 429 or a 5xx status this many times")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "bound each reply to this many output `tokens` (0: the provider's default, 8192 with anthropic, the endpoint's own limit with openai; chat completions send it as max_completion_tokens, which some OpenAI-compatible servers, such as Ollama, ignore: set the limit on the server)")
	fs.StringVar(&f.disclosure, "disclosure", "", "where opened sections go: append (the default: keep the system message and tools, for the prompt cache) or rerender")
	fs.StringVar(&f.prices, "prices", "", "a JSON `file` of model prices in US dollars per million tokens: {\"model\": {\"input\": 1.25, \"cached_input\": 0.125, \"output\": 10}}")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the first request that would be sent and exit: start nothing, call no model, write nothing")
	fs.StringVar(&f.transcript, "transcript", "", "append the run to this JSON-lines `file` (--resume FILE continues the last run in it)")
	fs.StringVar(&f.resume, "resume", "", "continue the last run saved in this transcript `file` (the task, if any, is a follow-up); the run is appended to it")
	fs.StringVar(&f.actions, "actions", "native", "how the model acts: native (tool calling) or text (fenced blocks and JSON actions)")
	fs.StringVar(&f.promptPath, "prompt", "", "a prompt `file` (markdown, as unfold render reads) to use instead of the default instructions")
	fs.StringVar(&f.paramsPath, "params", "", "a JSON `file` with the params the prompt file's templates see")
	fs.StringVar(&f.names, "builtins", "all", builtinsUsage())
	fs.IntVar(&f.budget, "budget", 0, "fit the system message into this many `tokens`, as --tokenizer counts them (0: no budget)")
	fs.StringVar(&f.tokenizer, "tokenizer", "o200k", "how --budget counts tokens: o200k (OpenAI's GPT-4o and later), cl100k (GPT-4) or estimate (no vocabulary: within about 12% on English and code, up to twice over on other scripts)")
	fs.IntVar(&f.outputBudget, "output-budget", orchestrator.DefaultOutputBudget, budgetUsage)
	fs.BoolVar(&f.help, "help-tool", true, "offer the help tool")
	skillDirs := skillsFlag(fs)
	var mcpFiles mcpConfigs
	fs.Var(&mcpFiles, "mcp-config", mcpConfigUsage)

	var task string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		task, args = args[0], args[1:]
	}
	if code := parseFlagsArgs(fs, agentHelp, args, stdout, stderr); code >= 0 {
		return code
	}
	if task == "" && fs.NArg() == 1 {
		task = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unfold agent: want one task, got %q; quote the task\n", fs.Args())
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "unfold agent: "+format+"\n", a...)
		return 2
	}
	if strings.TrimSpace(task) == "" && f.resume == "" {
		return usageErr("no task; say what to do: unfold agent \"task\" --project DIR")
	}
	mode, err := agent.ParseActionMode(f.actions)
	if err != nil {
		return usageErr("--actions %q: want native or text", f.actions)
	}
	disclosure, err := agent.ParseDisclosure(f.disclosure)
	if err != nil {
		return usageErr("--disclosure %q: want append or rerender", f.disclosure)
	}
	if err := checkBudget(f.outputBudget); err != nil {
		return usageErr("%v", err)
	}
	if f.budget < 0 || f.maxSteps < 1 || f.maxRetries < 0 || f.timeout < 0 || f.maxTokens < 0 {
		return usageErr("--budget, --max-retries, --max-tokens and --timeout must be 0 or more and --max-steps 1 or more")
	}
	counter, err := counterFor(f.tokenizer)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.budget == 0 {
		counter = nil // the run's counts for the transcript stay the estimate's
	}
	if f.paramsPath != "" && f.promptPath == "" {
		return usageErr("--params needs --prompt")
	}
	if f.dryRun && f.resume != "" {
		return usageErr("--dry-run shows the first request of a new run; it does not go with --resume")
	}
	m, err := newModel(f)
	if err != nil {
		return usageErr("%v", err)
	}
	prices := agent.DefaultPrices()
	if f.prices != "" {
		data, err := readfile.Read(f.prices, maxParamsBytes)
		var over agent.Prices
		if err == nil {
			over, err = agent.ReadPrices(strings.NewReader(string(data)))
		}
		if err != nil {
			return usageErr("--prices %s: %v", f.prices, err)
		}
		prices = prices.Merge(over)
	}
	dir, err := projectDir(f.project)
	if err != nil {
		return usageErr("%v", err)
	}
	set, err := loadSkills(dir, *skillDirs, stderr, "agent")
	if err != nil {
		return usageErr("%v", err)
	}
	// Signals stop the run, the start included; the environments close
	// within the grace.
	stop := stopOnSignal("agent", stderr)
	defer stop.stop()
	// A reader gone from stdout or stderr (unfold agent ... | head) makes
	// writes fail rather than kill the process, so that the environments
	// still shut down at the end, the programs they started with them.
	survivePipe()
	// A reader gone away stops the run rather than let it call the model
	// for output nobody reads; the line saying so goes to the other
	// stream.
	pipes := watchPipes(stop.cancel, stdout, stderr)
	defer pipes.stop()
	stdout, stderr = pipes.stdout, pipes.stderr
	g, err := startGateway(stop.ctx, dir, mcpFiles, f.dryRun, f.outputBudget, stderr)
	if err != nil {
		return usageErr("%v", err)
	}
	if g != nil {
		defer g.Close()
		if err := waitGateway(stop.ctx, g, stderr); err != nil {
			if stop.signal() == nil && pipes.report("agent") {
				return 1
			}
			fmt.Fprintf(stderr, "unfold agent: stopped by %s while MCP servers started\n", stop.name())
			return stop.code()
		}
	}
	var changes uint64 // the gateway's, when the prompt was built
	if g != nil {
		changes = g.Changes()
	}
	p, err := agentPrompt(f.promptPath, f.paramsPath, dir, set, g)
	if err != nil {
		return usageErr("%v", err)
	}

	var tr *agent.Transcript
	var tf *os.File
	if !f.dryRun && (f.transcript != "" || f.resume != "") {
		// Opened, locked and read before anything starts.
		if tr, tf, err = openTranscripts(f.resume, f.transcript, stderr); err != nil {
			fmt.Fprintf(stderr, "unfold agent: %v\n", err)
			return 1
		}
		defer tf.Close()
	}

	var o *orchestrator.Orchestrator
	if f.dryRun {
		o, err = dryOrchestrator(dir, f.names, stderr)
	} else {
		o, err = newOrchestrator(dir, orchestrator.DefaultMaxLineBytes, f.names, stderr, orchestrator.WithOutputBudget(f.outputBudget))
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 1
	}
	defer func() {
		if err := o.Close(); err != nil {
			fmt.Fprintf(stderr, "unfold agent: shutting down: %v\n", err)
		}
	}()

	// Context files stay inside the project, symbolic links included.
	cfs, err := rootfs.New(dir)
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 1
	}
	defer cfs.Close()
	prog := newProgress(stderr)
	opts := []agent.Option{
		agent.WithSession(o.Session()), agent.WithOrchestrator(o),
		agent.WithFS(cfs), agent.WithBudget(f.budget, counter),
		agent.WithMaxSteps(f.maxSteps), agent.WithActions(mode), agent.WithDisclosure(disclosure),
		agent.WithOnProgress(prog.report),
	}
	if g != nil {
		// A server started again by find_tools or call_tool, or one
		// whose tools changed, shows in the prompt built again.
		opts = append(opts, agent.WithPromptChanges(changes, g.Changes, func() (*prompt.Prompt, error) {
			return agentPrompt(f.promptPath, f.paramsPath, dir, set, g)
		}))
	}
	price, priced := prices.Lookup(f.model)
	if priced {
		opts = append(opts, agent.WithPrice(price))
	}
	if f.help {
		opts = append(opts, agent.WithHelp())
	}
	if f.dryRun {
		// Nothing is written: context files go to memory too.
		opts = append(opts, agent.WithDryRun())
		a, err := agent.New(m, p, opts...)
		if err != nil {
			fmt.Fprintf(stderr, "unfold agent: %v\n", err)
			return 1
		}
		pv, err := a.Preview(task)
		if err != nil {
			fmt.Fprintf(stderr, "unfold agent: %v\n", err)
			return 1
		}
		printPreview(stdout, f, a.Disclosure(), pv)
		if pipes.report("agent") {
			return 1
		}
		return 0
	}
	if tf != nil {
		opts = append(opts, agent.WithTranscript(tf))
	}
	a, err := agent.New(m, p, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 1
	}

	ctx := stop.ctx
	if g != nil {
		// A server's result cut to the budget says how this run reads
		// the whole: the environments it has when the call is made.
		ctx = gateway.WithReadSaved(ctx, func(name string) string {
			return gateway.ReadSavedWith(o.Names(), false)(name)
		})
	}
	var res *agent.Result
	if tr != nil {
		res, err = a.Resume(ctx, tr, task)
	} else {
		res, err = a.Run(ctx, task)
	}
	prog.stop()
	if stop.signal() == nil && pipes.report("agent") {
		return 1
	}
	if res != nil {
		printTotals(stderr, res, f.model, priced)
	}
	if res != nil && (err == nil || res.Answer != "") {
		// An answer the model gave is printed even when the run then
		// failed (a transcript that could not be written).
		fmt.Fprintln(stdout, res.Answer)
	}
	if stop.signal() != nil {
		fmt.Fprintf(stderr, "unfold agent: stopped by %s\n", stop.name())
		return stop.code()
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v%s%s%s\n", err, outputLimitHint(err, f.provider == "openai" && f.api == "chat"), keyHint(err, f), contextWindowHint(err))
		return 1
	}
	return 0
}

// outputLimitHint names the flag that raises the output limit, for a run
// that ended at a reply cut there. With chat completions (chat) the flag
// sends max_completion_tokens, which some OpenAI-compatible servers
// ignore without an error (Ollama, llama-cpp-python): the hint says so
// rather than promise what the server may not do.
func outputLimitHint(err error, chat bool) string {
	var se *agent.StopError
	if !errors.As(err, &se) || se.Finish != agent.FinishTruncated || se.Reason == "model_context_window_exceeded" {
		return ""
	}
	if chat {
		return " (--max-tokens N raises the limit where the endpoint reads max_completion_tokens; some OpenAI-compatible servers, such as Ollama, ignore it: set the limit on the server)"
	}
	return " (--max-tokens N raises the limit)"
}

// contextWindowHint names the flags for a run whose conversation
// outgrew the model's context window: --resume sends it again. For a
// refusal of the output limit asked for, it names --max-tokens.
func contextWindowHint(err error) string {
	if errors.Is(err, agent.ErrOutputLimit) {
		return " (--max-tokens N asks for fewer output tokens)"
	}
	if !errors.Is(err, agent.ErrContextWindow) {
		return ""
	}
	return " (run unfold agent again without --resume; --budget N bounds the system message)"
}

// agentPrompt loads the prompt file with its params, or builds the default
// instructions, with the skills and the MCP servers' section (when there is
// a gateway) after them.
func agentPrompt(path, paramsPath, dir string, set *skills.Set, g *gateway.Gateway) (*prompt.Prompt, error) {
	if path != "" {
		f, err := promptfile.Load(path)
		if err != nil {
			return nil, err
		}
		if err := skillsClash(path, f, set); err != nil {
			return nil, err
		}
		t, err := withSkills(f.Template(), set)
		if err == nil {
			t, err = withGateway(t, g)
		}
		if err != nil {
			return nil, err
		}
		params := promptfile.Params{}
		if paramsPath != "" {
			data, err := readfile.Read(paramsPath, maxParamsBytes)
			if err != nil {
				return nil, fmt.Errorf("--params: %w", err)
			}
			if params, err = promptfile.DecodeParams(data); err != nil {
				return nil, fmt.Errorf("--params %s: %w", paramsPath, err)
			}
		}
		// Every template of the file runs once now, those of summarized
		// sections too, so that a param the file misses is named before
		// anything starts, not when the model opens the section.
		if err := f.Check(params); err != nil {
			return nil, paramsHint(err, paramsPath)
		}
		p, err := t.Bind(params)
		if err == nil {
			_, err = p.Render(session.New(), nil)
		}
		if err != nil {
			return nil, promptFileError(f, paramsPath, err)
		}
		return p, nil
	}
	t, err := prompt.New("unfold/agent", "default", section.New(section.Spec[agentParams]{
		Key: "instructions", Title: "Instructions", Body: defaultInstructions,
	}))
	if err == nil {
		t, err = withSkills(t, set)
	}
	if err == nil {
		t, err = withGateway(t, g)
	}
	if err != nil {
		return nil, err
	}
	return t.Bind(agentParams{Project: dir})
}

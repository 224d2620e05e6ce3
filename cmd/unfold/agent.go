package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/prompt"
	"github.com/unfold-dev/unfold/promptfile"
	"github.com/unfold-dev/unfold/section"
	"github.com/unfold-dev/unfold/skills"
	"github.com/unfold-dev/unfold/tokens"
)

const agentHelp = `Usage: unfold agent "task" --project DIR [flags]

Run an agent on a task in a project: the model sees the instructions (or the
prompt file given with --prompt) as its system message and the environments'
screens (bash, python, editor, and the project's env/*.json) in its newest
message, runs commands through them and opens summarized sections as it
needs them. Progress goes to stderr, the final answer to stdout.

Skills in DIR/.claude/skills, DIR/.agents/skills and DIR/skills, and in
each --skills DIR, are listed in the system message by name and
description; the model opens one to read its instructions and its files.

The endpoint is any OpenAI-compatible chat completions API: --base-url (or
OPENAI_BASE_URL) and --model (or UNFOLD_MODEL); the API key is read from the
environment variable --api-key-env names.
`

const defaultInstructions = `You are an agent working in the project directory {{.Project}}.
Use the environments below to inspect and change the project: their screens
show their state and the commands they accept. Call the help tool to see
everything on offer, and open summarized sections when you need them.
Work step by step; when the task is done, answer with a short summary of
what you did and found.`

type agentParams struct{ Project string }

func runAgent(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	project := fs.String("project", ".", "the project `dir`ectory the environments work in")
	baseURL := fs.String("base-url", os.Getenv("OPENAI_BASE_URL"), "the chat completions endpoint `url`, such as http://localhost:11434/v1 (default $OPENAI_BASE_URL)")
	model := fs.String("model", os.Getenv("UNFOLD_MODEL"), "the model `name` (default $UNFOLD_MODEL)")
	keyEnv := fs.String("api-key-env", "OPENAI_API_KEY", "the environment `variable` holding the API key")
	maxSteps := fs.Int("max-steps", agent.DefaultMaxSteps, "stop after this many model calls")
	dryRun := fs.Bool("dry-run", false, "run no command and no tool: report what would have run")
	transcript := fs.String("transcript", "", "append the run to this JSON-lines `file`")
	resume := fs.String("resume", "", "continue the run saved in this transcript `file` (the task, if any, is a follow-up); the run is appended to it")
	actions := fs.String("actions", "native", "how the model acts: native (tool calling) or text (fenced blocks and JSON actions)")
	promptPath := fs.String("prompt", "", "a prompt `file` (markdown, as unfold render reads) to use instead of the default instructions")
	names := fs.String("builtins", "all", builtinsUsage())
	budget := fs.Int("budget", 0, "fit the system message into this many `tokens` (0: no budget)")
	help := fs.Bool("help-tool", true, "offer the help tool")
	skillDirs := skillsFlag(fs)

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
	if strings.TrimSpace(task) == "" && *resume == "" {
		fmt.Fprintf(stderr, "unfold agent: no task; say what to do: unfold agent \"task\" --project DIR\n")
		return 2
	}
	mode, err := agent.ParseActionMode(*actions)
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: --actions %q: want native or text\n", *actions)
		return 2
	}
	if *baseURL == "" || *model == "" {
		fmt.Fprintln(stderr, "unfold agent: no model endpoint configured: pass --base-url URL (or set OPENAI_BASE_URL) and --model NAME (or set UNFOLD_MODEL)")
		return 2
	}
	if *budget < 0 || *maxSteps < 1 {
		fmt.Fprintln(stderr, "unfold agent: --budget must be 0 or more and --max-steps 1 or more")
		return 2
	}
	m, err := openai.New(*baseURL, *model, openai.WithAPIKey(os.Getenv(*keyEnv)))
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 2
	}
	dir, err := filepath.Abs(*project)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(dir); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", dir)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: --project: %v\n", err)
		return 2
	}
	set, err := loadSkills(dir, *skillDirs, stderr, "agent")
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 2
	}
	p, err := agentPrompt(*promptPath, dir, set)
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 2
	}

	var tr *agent.Transcript
	tpath := *transcript
	if *resume != "" {
		f, err := os.Open(*resume)
		if err == nil {
			tr, err = agent.ReadTranscript(f)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "unfold agent: --resume: %v\n", err)
			return 1
		}
		if tpath == "" {
			tpath = *resume
		}
	}
	var tw io.Writer
	if tpath != "" {
		f, err := os.OpenFile(tpath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "unfold agent: --transcript: %v\n", err)
			return 1
		}
		defer f.Close()
		tw = f
	}

	o, err := newOrchestrator(dir, orchestrator.DefaultMaxLineBytes, *names, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 1
	}
	defer func() {
		if err := o.Close(); err != nil {
			fmt.Fprintf(stderr, "unfold agent: shutting down: %v\n", err)
		}
	}()

	var counter tokens.Counter
	if *budget > 0 {
		counter = tokens.Estimate
	}
	opts := []agent.Option{
		agent.WithSession(o.Session()), agent.WithOrchestrator(o),
		agent.WithFS(afero.NewBasePathFs(afero.NewOsFs(), dir)), agent.WithBudget(*budget, counter),
		agent.WithMaxSteps(*maxSteps), agent.WithActions(mode), agent.WithOnProgress(progressPrinter(stderr)),
	}
	if tw != nil {
		opts = append(opts, agent.WithTranscript(tw))
	}
	if *help {
		opts = append(opts, agent.WithHelp())
	}
	if *dryRun {
		opts = append(opts, agent.WithDryRun())
		fmt.Fprintln(stderr, "dry run: no command or tool will run")
	}
	a, err := agent.New(m, p, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var res *agent.Result
	if tr != nil {
		res, err = a.Resume(ctx, tr, task)
	} else {
		res, err = a.Run(ctx, task)
	}
	if res != nil {
		fmt.Fprintf(stderr, "%d steps, %d tokens (%d cached), %s\n", res.Steps, res.Usage.Total(), res.Usage.CachedTokens, res.Elapsed.Round(time.Millisecond))
	}
	if err != nil {
		fmt.Fprintf(stderr, "unfold agent: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, res.Answer)
	return 0
}

// agentPrompt loads the prompt file, or builds the default instructions,
// with the skills after them.
func agentPrompt(path, dir string, set *skills.Set) (*prompt.Prompt, error) {
	if path != "" {
		f, err := promptfile.Load(path)
		if err != nil {
			return nil, err
		}
		t, err := withSkills(f.Template(), set)
		if err != nil {
			return nil, err
		}
		return t.Bind(promptfile.Params{})
	}
	t, err := prompt.New("unfold/agent", "default", section.New(section.Spec[agentParams]{
		Key: "instructions", Title: "Instructions", Body: defaultInstructions,
	}))
	if err == nil {
		t, err = withSkills(t, set)
	}
	if err != nil {
		return nil, err
	}
	return t.Bind(agentParams{Project: dir})
}

// progressPrinter writes one line per model call and tool call.
func progressPrinter(w io.Writer) func(agent.Progress) {
	return func(p agent.Progress) {
		status := "ok"
		if !p.Success {
			status = "failed"
		}
		var what string
		switch p.Kind {
		case "model":
			what = "model: " + p.Detail
		case "tool":
			what = fmt.Sprintf("tool %s: %s", p.Tool, status)
		case "expansion":
			what = "opened " + p.Detail
		case "invalid":
			what = "no action in the reply; asked again"
		case "answer":
			what = "answered"
		default:
			what = p.Kind
		}
		fmt.Fprintf(w, "step %d  %-40s %7d tokens  %s\n", p.Step, what, p.Usage.Total(), p.Elapsed.Round(10*time.Millisecond))
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/unfold-dev/unfold/agent"
	"github.com/unfold-dev/unfold/agent/anthropic"
	"github.com/unfold-dev/unfold/agent/openai"
	"github.com/unfold-dev/unfold/envs"
	"github.com/unfold-dev/unfold/orchestrator"
	"github.com/unfold-dev/unfold/session"
	"github.com/unfold-dev/unfold/tokens"
)

// newModel makes the model adapter the flags name. A dry run needs no
// endpoint: it calls none.
func newModel(f agentFlags) (agent.Model, error) {
	keyEnv := keyVar(f)
	base := f.baseURL
	switch f.provider {
	case "openai":
		if base == "" {
			base = os.Getenv("OPENAI_BASE_URL")
		}
	case "anthropic":
		if base == "" {
			base = os.Getenv("ANTHROPIC_BASE_URL")
		}
		if f.api != "chat" {
			return nil, fmt.Errorf("--api %q goes with --provider openai; the anthropic provider has one API", f.api)
		}
	default:
		return nil, fmt.Errorf("--provider %q: want openai or anthropic", f.provider)
	}
	if f.provider == "openai" && base == "" && !f.dryRun {
		return nil, errors.New("no model endpoint configured: pass --base-url URL (or set OPENAI_BASE_URL) and --model NAME (or set UNFOLD_MODEL)")
	}
	if f.model == "" && !f.dryRun {
		return nil, errors.New("no model: pass --model NAME (or set UNFOLD_MODEL)")
	}
	if host := keyedHost(f.provider, base); host != "" && os.Getenv(keyEnv) == "" && !f.dryRun {
		return nil, fmt.Errorf("%s is not set, and %s wants an API key: set it, or name the variable that holds the key with --api-key-env", keyEnv, host)
	}
	if f.provider == "anthropic" {
		return anthropicModel(base, orNone(f.model), os.Getenv(keyEnv), f)
	}
	if base == "" {
		base = "http://endpoint.not.configured/v1" // a dry run calls none
	}
	if f.api != "chat" && f.api != "responses" {
		return nil, fmt.Errorf("--api %q: want chat or responses", f.api)
	}
	return openaiModel(base, orNone(f.model), os.Getenv(keyEnv), f)
}

// anthropicModel is the client of the Messages API.
func anthropicModel(base, model, key string, f agentFlags) (agent.Model, error) {
	opts := []anthropic.Option{anthropic.WithAPIKey(key), anthropic.WithTimeout(f.timeout), anthropic.WithMaxRetries(f.maxRetries)}
	if f.maxTokens > 0 {
		opts = append(opts, anthropic.WithMaxTokens(f.maxTokens))
	}
	return anthropic.New(base, model, opts...)
}

// openaiModel is the client of an OpenAI-compatible endpoint, for the
// API f names.
func openaiModel(base, model, key string, f agentFlags) (agent.Model, error) {
	opts := []openai.Option{openai.WithAPIKey(key), openai.WithTimeout(f.timeout), openai.WithMaxRetries(f.maxRetries)}
	if f.maxTokens > 0 {
		opts = append(opts, openai.WithMaxTokens(f.maxTokens))
	}
	if f.api == "responses" {
		return openai.NewResponses(base, model, opts...)
	}
	return openai.New(base, model, opts...)
}

// keyVar is the environment variable the API key is read from.
func keyVar(f agentFlags) string {
	switch {
	case f.keyEnv != "":
		return f.keyEnv
	case f.provider == "anthropic":
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

// keyedHost is the host of base when it is the provider's own API, which
// always wants a key (the Messages API when base is empty), or "": a local
// endpoint (Ollama, vLLM) may want none.
func keyedHost(provider, base string) string {
	want := map[string]string{"anthropic": "api.anthropic.com", "openai": "api.openai.com"}[provider]
	if base == "" && provider == "anthropic" {
		return want
	}
	if u, err := url.Parse(base); err == nil && want != "" && strings.EqualFold(u.Hostname(), want) {
		return want
	}
	return ""
}

// keyHint says which variable to set when the endpoint refused a request
// (401 or 403) and the variable the key is read from is empty.
func keyHint(err error, f agentFlags) string {
	if s := statusOf(err); s != 401 && s != 403 {
		return ""
	}
	if v := keyVar(f); os.Getenv(v) == "" {
		return " (" + v + " is not set: set it to the API key, or name the variable that holds it with --api-key-env)"
	}
	return ""
}

// statusOf is the status of the reply a model endpoint answered err
// with; 0 when err is not one.
func statusOf(err error) int {
	if se := (*anthropic.StatusError)(nil); errors.As(err, &se) {
		return se.StatusCode
	}
	if se := (*openai.StatusError)(nil); errors.As(err, &se) {
		return se.StatusCode
	}
	return 0
}

func orNone(model string) string {
	if model == "" {
		return "(no model given)"
	}
	return model
}

// standIn is an environment in a dry run: it shows what it is and starts
// nothing.
type standIn struct{ what string }

var (
	_ envs.Env        = standIn{}
	_ envs.Summarizer = standIn{}
)

func (s standIn) Execute(context.Context, string) (envs.Response, error) {
	return envs.Response{Output: "dry run: " + s.what + " was not started"}, nil
}

func (s standIn) Screen() (envs.Screen, error) {
	return envs.Screen{Content: "[dry run: " + s.what + " was not started; its screen shows once it runs]"}, nil
}

func (s standIn) Summary() string { return s.what + " (not started: dry run)" }

// dryOrchestrator registers the environments a run would have, the
// built-ins and the project's spec files, each a stand-in that starts
// nothing.
func dryOrchestrator(project, names string, stderr io.Writer) (*orchestrator.Orchestrator, error) {
	return assemble(project, names, stderr,
		func(b builtin) (envs.Env, error) { return standIn{what: "the " + b.name + " environment"}, nil },
		orchestrator.WithSession(session.New()),
		orchestrator.WithInteractive(func(s orchestrator.InteractiveSpec) (envs.Env, error) {
			return standIn{what: "the " + s.Name + " environment (" + s.Command + ")"}, nil
		}),
		orchestrator.WithProcesses(func(s orchestrator.ProcessSpec) (envs.Env, error) {
			return standIn{what: "the " + s.Name + " environment (" + s.Executable + ")"}, nil
		}),
	)
}

// printPreview writes the first request a run would send.
func printPreview(w io.Writer, f agentFlags, d agent.Disclosure, pv *agent.Preview) {
	api := f.provider
	if f.provider == "openai" {
		api += " " + map[string]string{"chat": "chat completions", "responses": "responses"}[f.api]
	}
	fmt.Fprintf(w, "Dry run: no environment started, no model called, nothing written.\n")
	fmt.Fprintf(w, "The first request (%s, model %s, disclosure %s), about %d tokens:\n\n", api, orNone(f.model), d, pv.SystemTokens+pv.ToolTokens+pv.MessageTokens)
	fmt.Fprintf(w, "== System message (%d tokens)\n\n%s\n\n", pv.SystemTokens, pv.Request.Messages[0].Content)
	fmt.Fprintf(w, "== Tools (%d tokens)\n\n", pv.ToolTokens)
	if len(pv.Request.Tools) == 0 {
		fmt.Fprintln(w, "(none: the tools are described in the system message)")
	}
	for _, t := range pv.Request.Tools {
		fmt.Fprintf(w, "- %s (%d tokens): %s\n", t.Name, tokens.Estimate.Count(string(t.Parameters))+tokens.Estimate.Count(t.Description), firstLine(t.Description))
	}
	for _, g := range pv.Request.Deferred {
		var names []string
		for _, t := range g.Tools {
			names = append(names, t.Name)
		}
		fmt.Fprintf(w, "- deferred until %s opens: %s\n", g.Section, strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "\n== Messages (%d tokens)\n", pv.MessageTokens)
	for _, m := range pv.Request.Messages[1:] {
		fmt.Fprintf(w, "\n-- %s\n\n%s\n", m.Role, m.Content)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// printTotals writes what the run used and what it cost, or, for a model
// the price table does not have, that it has no price.
func printTotals(w io.Writer, res *agent.Result, model string, priced bool) {
	u := res.Usage
	fmt.Fprintf(w, "%d %s, %s: %d input tokens (%d cached by the provider, %s of the requests in a prefix shared with the one before), %d output tokens",
		res.Steps, plural(res.Steps, "step", "steps"), res.Elapsed.Round(1e6), u.PromptTokens, u.CachedTokens, percent(u.PrefixTokens, u.RequestTokens), u.CompletionTokens)
	if priced {
		fmt.Fprintf(w, ", about $%.4f", res.Cost)
	} else {
		fmt.Fprintf(w, "; no price for %s: give --prices FILE", model)
	}
	fmt.Fprintln(w)
}

func percent(part, whole int) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(part)/float64(whole))
}

// Package agent runs a model over a prompt: render, call the model, run the
// tools it calls, open what it asks to open, render again, until it answers.
//
// # The loop
//
// An [Agent] holds a [Model], a bound prompt and its options: a session
// ([WithSession]), a filesystem ([WithFS]) and, optionally, an orchestrator
// of environments ([WithOrchestrator]), extra tools ([WithTools]), a token
// budget ([WithBudget]) and a transcript writer ([WithTranscript]). [Agent.Run] gives the model a task
// and loops. Each step renders the prompt with the session, calls the model
// and runs its tool calls in order, every call getting a result:
//
//	a, err := agent.New(m, p, agent.WithSession(sess), agent.WithFS(fs))
//	res, err := a.Run(ctx, "summarize the logs")
//	fmt.Println(res.Answer)
//
// The run ends when the model answers without tool calls, when the step limit
// is reached ([ErrStepLimit]) or when the context ends. A tool that fails
// (bad arguments, an unknown name, a handler error) is a failed result the
// model reads; the loop goes on.
//
// # Opening sections
//
// Sections open through a [prompt.Disclosure] of the prompt and the
// environments' sections. When the model calls open_sections on a section
// that carries tools (an environment declared on demand carries its command
// tool), the overrides go into the session as events, both prompts render
// again and the call is answered with the sections that opened and the new
// tools; the next request carries them. More than [MaxExpansions] such openings in
// one run fail it with [ErrExpansionLimit]. Content-only sections are written
// to context/<key>.md as the prompt package does, for the model to read with
// an environment.
//
// # Prompt caching
//
// The stable prompt (instructions, reference, help) is the system message.
// It is rendered at every step but replaced only when a section opens or
// closes, so providers that cache prompt prefixes reuse it. The environments'
// screens, rendered through their own sections, go into the newest message:
// all of them in the first, then the ones that changed after each step.
//
// # Text actions
//
// With [ActionsText] the model gets no tool definitions: the system message
// describes the tools, and each reply holds one action, a fenced block named
// after an environment (```bash) or a JSON object {"tool": ..., "input": ...}
// or {"final": ...}. The loop answers with an observation. A reply without
// an action gets one corrective message before the step counts as failed.
//
// # Transcripts and resuming
//
// With [WithTranscript], a run writes JSON lines ([Record]): messages,
// tool calls and results, render reports, expansions, timings, token usage,
// and the session events. [ReadTranscript] reads them back, and
// [Agent.Resume] continues the conversation with the session replayed.
//
// # Dry run
//
// With [WithDryRun] no tool and no environment command runs; each call is
// answered with what would have run. help and open_sections still work,
// writing context files into an in-memory layer.
//
// The adapter for OpenAI-compatible chat completion endpoints is in
// agent/openai.
package agent

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
// is reached ([ErrStepLimit]) or when the context ends. Of one reply, the
// first [MaxToolCalls] calls run; the others are answered without running. A tool that fails
// (bad arguments, an unknown name, a handler error) is a failed result the
// model reads; the loop goes on.
//
// Each request carries the whole conversation: nothing is dropped or
// summarized. A conversation that outgrows the model's context window
// ends the run with [ErrContextWindow], which says what to do; resuming
// it would send it again. A refusal that names the output limit asked
// for ends it with [ErrOutputLimit].
//
// # How a reply ends
//
// Adapters map their API's stop reasons onto a [Finish]. A reply cut
// short (FinishTruncated), refused or filtered without tool calls is not
// an answer: the run ends with a [*StopError] naming the reason, its text
// in [Result].Answer and the transcript. A tool call the reply was cut in
// ([ToolCall].Cut) never runs, whatever arguments came: it is answered
// as cut, for the model to make again; two replies in a row cut in a
// call end the run. A paused reply (FinishPaused) is sent back as it is
// for the model to continue its turn. A finished reply with no text and
// no tool calls is not an answer either: the model is told its reply was
// empty, and a second such reply in a row ends the run ([ErrEmptyReply]).
//
// # Opening sections
//
// Sections open through a [prompt.Disclosure] of the prompt and the
// environments' sections. When the model calls open_sections on a section
// that carries tools (an environment declared on demand carries its command
// tool), the overrides go into the session as events, both prompts render
// again and the call is answered with the sections that opened and the new
// tools. More than [MaxExpansions] such openings in one run fail it with
// [ErrExpansionLimit]; an opening refused for the budget changed nothing
// and does not count. Content-only sections are written to
// context/<key>.md as the prompt package does, for the model to read with
// an environment.
//
// Where the opened section reaches the model is the disclosure mode
// ([WithDisclosure]). With [DisclosureRerender] the system message is
// rendered again with the section in place, and the tool list is the
// render's. With [DisclosureAppend], the default for a model whose
// provider caches prompt prefixes ([Features]), the system message and the
// tool list of the run's start never change: the section's content is the
// answer to the open_sections call. An adapter whose API defers tools
// natively gets the tools
// of every section closed at the start in each request
// ([Request.Deferred]), declares them deferred, and loads a section's
// tools with the result that opened it ([Message.Loads]). With other
// adapters the model calls an opened section's tools through one tool
// offered from the start, [UseToolName] (use_tool), the opening's answer
// listing them with their input schemas; [WithToolBridge](false) adds them
// at the end of the tool list instead. The model sees
// the same sections and tools in both modes; the session and the
// transcript record the same events.
//
// # Prompt caching and cost
//
// The system message is the prompt (instructions, reference, help); the
// environments' screens go into the newest message: all of them in the
// first, then the ones that changed after each step. Before each request
// the agent follows the orchestrator's environments: spec files added,
// changed or removed (by a command of the step or by anyone) bring their
// environment's screen and tool, its new screen, or a note that it is
// gone, and its tool leaves the list. Each model call
// records, beside the provider's token counts ([Usage]), the request's
// tokens and those in a prefix identical to the previous request, the part
// a prefix cache can serve. With [WithPrice] a run's [Result] says what it
// cost; [DefaultPrices] lists some models' list prices.
//
// # Text actions
//
// With [ActionsText] the model gets no tool definitions: the system message
// describes the tools, and each reply holds one action, a fenced block named
// after an environment (```bash; the name's case does not matter) or a
// JSON object {"tool": ..., "input": ...} or {"final": ...}. The
// instructions ask for a longer outer fence (````) when the content holds
// ```, and such a block ends as in CommonMark, at its first bare fence at
// least as long as its opening one. A block opened by three backticks that
// holds a fence with an info string (```sh in a README an edit writes)
// ends at the first bare fence after which the rest of the reply pairs its
// fences up, so an example inside it stays whole; when a later bare fence,
// outside the examples opened in the block, would leave the rest paired
// too, the block is ambiguous, and as an action it is not run: the reply
// to the model says so and asks for a ```` fence. Only the blocks up to
// the first action are read, and the lines weighing closers may visit are
// bounded, linear in the reply; a block not decided within that bound is
// ambiguous too. The loop answers with an observation. A reply without an
// action gets a corrective message naming the environments there are. Each model call
// is a step, the reply to a correction too, so [WithMaxSteps] bounds the
// model calls in both modes. A conversation of a run with native actions
// resumed in text mode has its tool calls written as text actions and
// their results as observations: text mode sends no tools.
//
// # Transcripts and resuming
//
// With [WithTranscript], a run writes JSON lines ([Record]): messages,
// tool calls and results, render reports, expansions, timings, token usage,
// and the session events. Each tool call is recorded as it starts
// ([KindCall]) and as it ends, with the session events it caused, so a run
// killed in the middle of a step loses nothing that finished. The run stops
// at the first record it cannot write, so nothing runs unrecorded.
// [ReadTranscript] reads a transcript back ([ReadForResume] keeps only what
// a resume needs), leaving out a last line cut short by a crash, and
// [Agent.Resume] continues the conversation of its last run with the
// session replayed: a call that finished without its message (the run
// stopped after its result was recorded) is answered with its recorded
// result, and one that was running when the run stopped as one that may
// have taken effect. The calls of a reply get IDs no other call of the
// conversation has as the reply arrives (a server may repeat one, or give
// none: x, x_2). Its records continue the
// file read: a run resumed into another file needs the file's bytes from
// [Transcript.Start] copied there first. A transcript with no run, or
// whose first run is a resume, is refused.
//
// # Dry run
//
// With [WithDryRun] no tool and no environment command runs; each call is
// answered with what would have run. help and open_sections still work,
// writing context files into an in-memory layer. [Agent.Preview] builds
// the first request of a run without calling the model.
//
// # Adapters
//
// agent/openai talks to OpenAI-compatible chat completions endpoints and
// to the Responses API; agent/anthropic to the Messages API. A [Model]
// tells each retry it makes to [Request.OnRetry]; the run reports it as
// progress.
package agent

// Package orchestrator runs persistent environments for an agent: it holds
// them by name, routes commands to them, collects their screens, serves them
// over an NDJSON protocol, loads extra ones from spec files, and turns their
// screens into prompt sections.
//
// # Environments and commands
//
// An [Orchestrator] holds [envs.Env] values registered under identifier
// names. [Orchestrator.Execute] runs one command and collects every screen
// afterwards. A screen that never blocks ([QuickScreener]: the built-in
// environments') is drawn by the caller; the others are drawn so that a
// slow one holds no other, and waited for until the command's time limit
// (at least a quarter of a second, at most five): an environment that has
// not drawn its screen by then shows the last one it drew, under a line
// saying so. A drawing under way since before the command ended (for
// another command's response) is waited for and done again, so that the
// screen after a command is never one read before it:
//
//	o, err := orchestrator.New(orchestrator.WithSession(sess))
//	err = o.Register("timer", timer)
//	res := o.Execute(ctx, "timer", "start")
//	fmt.Println(res.Response.Output, res.Screens["timer"].Content)
//
// Failures are responses the model reads, never Go errors: an unknown
// environment ("Unknown environment: <name>\nAvailable: ..."), an environment
// that returns an error or panics ("Environment error in <name>:" and the
// error or the panic with its stack). A screen that fails shows the failure in
// that environment's screen only. Screens are cut to their MaxLines
// ([DefaultMaxLines] when 0) with a line saying how many lines were cut
// ([Truncate]).
//
// Some environments remember what their screen showed the agent (the
// editor checks an edit against the lines its views last drew): the
// screens [Orchestrator.Run], [Orchestrator.Screens], [Orchestrator.Screen]
// and the command tool return count as shown, while [Orchestrator.Preview]
// and the prompt sections' bodies draw previews ([Previewer]), which a
// front end uses for anything the agent may not see.
//
// [Orchestrator.Run] runs a [Command] with its limits: a timeout counted
// from its arrival (soft, giving control back while the command runs on;
// or hard), a quiet limit, a token budget. Commands to one environment take
// their turn in arrival order; commands to different environments run at
// once. An environment that is an [envs.LimitedExecutor] applies the
// limits itself; the others run under [envs.Background]. A response over
// its budget, or past what its environment keeps in memory, is cut and its
// whole output saved under the project's context/output ([WithProject],
// [WithOutputBudget]).
//
// Every command that reaches an environment is dispatched to the session as
// a [CommandExecuted] event (the answer to a question asking for a secret
// recorded as hidden); the [UsageSlice] counts them per environment.
// [Orchestrator.Close] shuts every environment down and reports every
// failure.
//
// # The protocol
//
// [Orchestrator.Serve] reads one JSON command per line and writes one JSON
// response per line, as `unfold serve` does on stdin and stdout
// (docs/serve-protocol.md). Lines are read as they come; commands with an
// id run alongside other environments' and are answered when ready. Lines
// it cannot use get an error line and serving goes on; a line longer than
// the limit is discarded without being held in memory; the end of input
// shuts everything down.
//
// # Spec files
//
// [Orchestrator.LoadSpecs] reads env/*.json in a project directory. Each file
// declares an environment named after the file: an "interactive" program
// driven on a terminal (validated here; [WithInteractive] supplies the
// implementation), or a "process" that speaks the process-environment
// protocol on its stdin and stdout ([Process], docs/process-environments.md;
// [WithProcesses] replaces it, as a dry run does with environments that
// start nothing). Files are validated against [SpecSchema]; a bad file is skipped with a
// [*SpecError] naming the file and the field, and shown on the orchestrator's
// own screen ([ScreenName]). Files added, changed or removed are picked up
// before the next command ([Orchestrator.ReloadSpecs]), unless
// [WithoutSpecReload] keeps the environments as loaded (a writer then asks
// [Orchestrator.ProgramFile] before it writes a file a loaded program is
// made of); the env directory
// is watched, so a command pays one system call for it when nothing
// changed. A process environment's protocol lets it send
// output while a command runs and ask for input; its processes end with it
// (those that left its process group included), under the resource limits
// its spec sets.
//
// # Screens as prompt sections
//
// [Orchestrator.Sections] returns a section per environment whose body is its
// live screen and whose summary is its one-line description. Sections render
// in full from the first turn; an environment registered [OnDemand] renders
// its summary until its first command or until the model opens it with
// open_sections, and its tools (its command tool, [Orchestrator.CommandTool], and any given with [Tools]) are offered only once
// it is open. [Orchestrator.CommandTools] takes every environment's command
// tool at once, with the [Orchestrator.Generation] they belong to, for a
// front end that follows spec files as they change. A command tool is
// named for its environment, so a spec file may not take one of
// [ReservedNames], the tools the front ends offer beside them; a front
// end that finds another tool of an environment's name names the file
// with [Orchestrator.SpecFile].
//
// A command tool carries hints of what the environment's commands do
// (read only, destructive, idempotent, open world; MCP clients see them as
// annotations): those given with [Hints] at registration or in a spec
// file's "hints", else those the environment gives ([envs.Hinter]), else
// what MCP assumes of a tool that says nothing.
package orchestrator

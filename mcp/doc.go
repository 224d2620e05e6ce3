// Package mcp serves an orchestrator's environments, and optionally a prompt,
// over the Model Context Protocol, so that any MCP client (a desktop
// assistant, a coding agent, an IDE) can drive them with the same
// progressive disclosure an unfold agent gets.
//
// It is built on the official SDK, github.com/modelcontextprotocol/go-sdk;
// import that package under another name (sdk below) next to this one.
//
// # Tools
//
// Every environment is a tool of the same name. Its input is the command text
// ("command") and an optional timeout in seconds ("timeout"); its result is
// the command's output, whether it succeeded and the environment's screen
// afterwards, both as text and as structured content ([orchestrator.CommandOutput]).
// The tool's description carries the environment's help as its screen shows
// it: long for commands not used yet, short for used ones. After every command
// the descriptions are recomputed, and a tool whose description changed is
// registered again, which makes the SDK send notifications/tools/list_changed.
// The help tool describes the environments, the resources and, with a prompt,
// the summarized sections.
//
// The tools follow the orchestrator's environments: after every call, and
// before a tools/list or resources/list, spec files added, changed or
// removed since are picked up ([orchestrator.Orchestrator.ReloadSpecs]),
// and when the environments changed ([orchestrator.Orchestrator.Generation])
// an added file's environment is offered, a removed one's is taken away
// and a changed one's describes its new file, with list_changed for the
// tools and the screens' resources. A file written by a command is
// offered right after that command.
//
// Every tool carries MCP's annotations (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint), from the tool's [tools.Hints]: an
// environment's come from the environment ([github.com/unfold-dev/unfold/envs.Hinter], or
// [orchestrator.Hints] at registration; a spec file's "hints"); help only
// reads; open_sections and find_tools change what is offered and nothing
// else; an upstream server's tools carry that server's annotations. A tool
// that says nothing is taken to be what MCP assumes of such a tool (it may
// destroy, and reach anything). Hints at the value MCP assumes when they
// are absent (destructiveHint and openWorldHint true, destructiveHint of a
// read-only tool) are left out: the tool list goes with every turn.
//
//	s, err := mcp.New(newOrchestrator, mcp.Options{})
//	err = s.Run(ctx, &mcp.StdioTransport{Reader: os.Stdin, Writer: os.Stdout})
//
// # Prompts
//
// With [Options.Prompt], the prompt's sections and one section per
// environment (its live screen) form one prompt. The tools offered are the
// rendered prompt's: those of every section in full, open_sections when
// something is summarized, and help. Opening content-only sections writes
// context files; opening sections that carry tools (an environment declared
// on demand, or a section with Go tools) renders the prompt again and offers
// their tools, again with list_changed. The environments' sections follow
// the spec files as the tools do: they are built again and replace the old
// ones, the session's openings kept, and an environment declared on demand
// in an added file is summarized until opened or used, as any other. The
// rendered prompt is the resource [PromptURI] and an MCP prompt named
// after the template's key.
//
// # Resources
//
// Each environment's screen is the resource unfold://screen/<name>, read live.
// A client may subscribe to a screen (resources/subscribe, or
// subscriptions/listen in the protocol of 2026-07-28): after every call,
// and every [Options].ScreenPoll for changes no call made (an interactive
// program that exited, a command still running past its soft limit), a
// subscribed screen whose content changed is announced once with
// notifications/resources/updated (every [DefaultScreenPoll] by default).
// A screen changes without a call only where its environment shows what
// happens between calls: bash lists its background jobs as of its last
// command, so a job that ends or prints shows, and is announced, with the
// next command. Other resources refuse a subscription. Reads, polls and tool
// descriptions draw previews ([orchestrator.Orchestrator.Preview]): only
// the screen an environment's tool returns with its command counts as
// shown to the model, so an edit based on lines the model never saw is
// refused.
//
// The context files open_sections writes are unfold://context/<key>.md, listed
// once written and readable through the resource template
// unfold://context/{file}, up to [MaxContextBytes] each. The prefixes are
// [ScreenURIPrefix] and [ContextURIPrefix].
//
// # Skills
//
// With [Options.Skills], a skills section (see package skills) follows the
// prompt's sections, or forms the prompt when there is none, and opens
// like them. Each skill is also an MCP prompt named after it, giving its
// instructions and the addresses of its files, and resources: its
// instructions at unfold://skill/<name> and each file at
// unfold://skill/<name>/<path> ([SkillURIPrefix]; each path segment
// percent-encoded, so 100%done.py is 100%25done.py), for clients without
// skills support. The listed files (at most skills.MaxFiles) are resources
// of their own; any other file of the skill reads through the template
// [SkillFileURITemplate]. A file is text when its content is UTF-8 without a NUL
// byte, whatever its type (JSON, XML), and a blob otherwise.
//
// # Other MCP servers
//
// With [Options.Gateway] (package gateway), the MCP servers it holds are
// put behind this one: each is a section of the prompt, summarized until
// opened, whose tools are then offered as SERVER__TOOL, with find_tools and
// call_tool; results, progress and cancellation pass through, the servers'
// resources and prompts are listed under their names (an address in the
// unfold: scheme, one another server registered, or one that does not
// parse is left out with a warning: no server replaces unfold's resources
// or another's), and a server's
// list_changed reaches the client (the section is built again and replaces
// the old one through prompt.Disclosure.Replace).
//
// # Identity
//
// The server introduces itself as unfold, with the version of this module
// the program was built with (from its build information; [Options].Name
// and Version override them), and with instructions that name the
// environments, the prompt, the upstream servers and how to reach them.
//
// # Sessions and transports
//
// Every MCP session is served with environments, a prompt session and a
// tool list of its own: the [Factory] given to [New] builds its orchestrator
// when the session starts, and the server closes it when the session ends.
// Two clients never share a shell.
//
// [Server.Run] serves one session (stdio, or the SDK's in-memory transport
// in tests). [StdioTransport] answers a line that is not a JSON-RPC message,
// or one past its size limit, with a JSON-RPC error and goes on: the
// session keeps its state ([DefaultMaxFrameBytes] by default). Requests
// wait while [DefaultMaxInFlight] of them, or an estimated
// [DefaultMaxInFlightBytes] (a resource read other than a screen's counts
// as the largest context file), wait for their answers to be written, and
// past as many waiting the server answers "server busy"; so neither a
// client that stops reading nor one that asks for many large answers at
// once can make the server's memory grow without bound. Cancellations and
// the end of input are read all the while; a request cancelled while it
// waits is answered and never runs. A request that reuses the id of one in
// flight is refused with an invalid-request error, and so is one whose id
// is a number other than a whole one from -2^53 to 2^53 (7.5, 1e2, 2^64):
// the SDK keeps number ids as int64s read through a float64, and would
// answer it under another id (7.5 as 7, the id of another request). The
// error carries the id as written; a cancellation naming such an id is
// dropped.
// [Server.Handler] serves streamable HTTP: request bodies have a size limit
// and a read timeout ([DefaultMaxBodyBytes], [DefaultBodyTimeout]), a
// session idle for [HTTPOptions].SessionTimeout ([DefaultSessionTimeout])
// ends, at most [HTTPOptions].MaxSessions ([DefaultMaxSessions]) sessions
// are open at once (one more is refused with 503 Service Unavailable;
// requests without a session that start none, such as server/discover, are
// all served by one conn kept for them), a session's requests in flight are
// bounded as over stdio (past the bound a POST gets 429 Too Many Requests),
// a call whose client closed the response stream is cancelled, and with
// [HTTPOptions].Token every request must carry that bearer token. Request
// bodies are read as the SDK reads them (keys matched case-sensitively),
// so what is counted is what the SDK serves. A POST with a number id
// refused over stdio, or a cancellation naming one, gets 400 Bad Request
// with the JSON-RPC error, and nothing of it is served.
package mcp

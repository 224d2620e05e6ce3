// Package gateway puts MCP servers behind one door, each disclosed only
// when needed: every configured server is a section of the prompt, whose
// summary costs a few tokens and whose tools are offered once it is opened.
//
// # Configuration
//
// [LoadConfigs] reads the project's .mcp.json and any other file in the
// mcpServers format Claude Code, Claude Desktop and Cursor use, with ${VAR}
// and ${VAR:-default} expanded (and Cursor's and VS Code's ${env:VAR},
// ${workspaceFolder}, ${userHome} and "envFile"); a bad entry is an error naming the file,
// the server and the field. An entry unfold cannot start here (an "sse"
// server, a variable not set, a name it cannot use) is left out and
// returned as a warning, so that the other servers start. A stdio server
// runs in the directory of the file that declared it, relative paths
// taken against it. A configuration file is at most
// [MaxConfigBytes], a cached manifest at most [MaxManifestBytes]; a call
// waits [DefaultTimeout] unless the server's configuration says otherwise,
// and [Upstream.Config] gives a server's configuration back.
//
// # Sections
//
// [Gateway.Section] returns one section ("mcp") shown in full, carrying
// find_tools and call_tool, with a summarized section per server: its
// summary gives the server's instructions (shortened) and its tools'
// names, its brief their count (a token budget chooses, lowest
// [ServerConfig].Priority first). Opening "mcp.NAME" offers all the
// server's tools as NAME__TOOL ([ToolName], [Separator]) with their
// schemas; opening "mcp.NAME.tools.TOOL" offers one. Openings go through
// the prompt's [prompt.Disclosure] like any other: the section is a
// section any prompt can hold. find_tools ranks every tool by BM25 over
// names, descriptions and argument names and opens the best matches (an
// expansion by key); call_tool ([CallToolInput]) calls an open tool by
// server and tool name, its arguments checked against the tool's schema,
// for clients that do not see tools added after the start.
//
// Text from a server (instructions, descriptions) shows as written
// ([section.Literal]). Tool names are unique across the gateway: a name
// another tool has taken gets a suffix ("-2"), in configuration order. A
// tool whose input schema is not an object is left out with a warning. A
// result whose text passes [Options].OutputBudget tokens is cut as an
// environment's output is ([envs.Limits.Fit]), the whole saved under
// [OutputDir] of the call's file system; structured content counts with
// the text (once, when it repeats the text), and a cut result goes back
// as text alone, its note saying how to read the whole ([WithReadSaved]
// words it for a session without the editor and grep).
//
// What one server may send is bounded: its instructions to
// [MaxInstructions] bytes and each tool's description to [MaxDescription]
// (cut with a note saying so); a tool whose input or output schema passes
// [MaxSchema] bytes is left out as it is listed, its schema not kept, and
// named in its server's section and in a warning; a list (tools,
// resources, resource templates, prompts) past [MaxListed] entries over
// all its pages, or lists that take more than [MaxManifestBytes] of JSON
// together, make the server fail to start, with the reason in its section.
//
// # Four states, paid for when used
//
// A server's manifest (tools, instructions, version, resources, prompts)
// is cached in CacheDir (.unfold/mcp/NAME.json in a project), keyed by a
// hash of its configuration. With the manifest cached, a server is not
// started until one of its tools is called; without it, [New] starts it in
// the background to list what it offers ([Gateway.Wait] waits for that),
// and find_tools and call_tool start again one that failed. A server
// started with its manifest from the cache is listed again in the
// background (it may have been updated since), and so is one that answers
// a call with "invalid params" (an unknown tool). When a server says its
// lists changed, the gateway lists them again (one list at a time, at
// most one per half second, the newest answer kept). A list that differs
// from the manifest updates the cache and tells the subscribers
// ([Gateway.Subscribe]), who build the section again and replace it
// (prompt.Disclosure.Replace); one that built the section before it
// subscribed builds it again if [Gateway.Changes] moved meanwhile. A list
// that does not differ changes nothing.
//
// # Faults stay local
//
// A server that fails to start, crashes, hangs past its call timeout or
// answers garbage makes the call fail with an error naming it and showing
// the tail of its stderr ([*Fault]); it is stopped and started again on
// next use, waiting longer after each failure in a row. The other servers
// and the session go on. In a server's errors, the values of the
// variables its configuration expanded show as ${VAR}: a key in a URL
// reaches neither the model nor a log.
//
// # HTTP servers
//
// The configured headers go only to the server's origin (its scheme, host
// and port, or its host over https): a redirect to another origin is
// followed without them. An answer's body is read up to
// [MaxResponseBytes], and so is each event of an event stream; a longer
// one fails the request with an error naming the server and the bound.
//
// # Stopping
//
// Each stdio server runs in a process group of its own, tracked with
// everything it starts by internal/procs. [Gateway.Close] stops the
// servers together, within [CloseTimeout]: stdin closed, then SIGTERM and
// SIGKILL to what is left of each. On Linux a server is also killed by
// the kernel when the process that started it dies.
package gateway

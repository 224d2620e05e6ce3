// Package unfold is the root of a library and command-line tool for building
// LLM prompts and agents that spend tokens only where they matter.
//
// A prompt is a typed tree of sections rendered to markdown; each section
// renders in full or as a summary, and the model opens summaries on demand
// with the open_sections tool. Persistent environments (shells, REPLs, an
// editor, any interactive CLI) become prompt sections through the
// orchestrator.
//
// The packages, from the bottom up:
//
//   - session: the event log, typed state slices, reducers and snapshots
//   - tokens: token counting (an estimate; exact BPE in tokens/bpe)
//   - visibility: FULL or SUMMARY, selectors and session overrides
//   - tools: typed tools with JSON schemas inferred from Go types
//   - section: the section tree
//   - prompt: rendering, open_sections, context files and token budgets
//   - promptfile, prompttest: prompts as markdown files; testing prompts
//   - envs: the environment contract and declarative environments, with
//     envs/bash, envs/python, envs/editor and envs/interactive built in
//   - orchestrator: environments by name, screens and the NDJSON server
//   - agent, mcp: the agent loop over OpenAI-compatible models; an MCP server
//
// The unfold command (cmd/unfold) serves, renders, runs agents and speaks
// MCP from the shell.
package unfold

// Package tools turns typed Go functions into tools a model can call.
//
// A tool has a name, a description, and JSON schemas for its input and
// output, inferred from Go types. [New] builds one from a [Handler]:
//
//	type searchIn struct {
//		Query string `json:"query" description:"words to look for"`
//		Limit int    `json:"limit,omitempty"`
//	}
//	search, err := tools.New("search", "Search the notes.",
//		func(ctx context.Context, tc tools.Context, in searchIn) ([]string, error) { ... })
//
// [Tool.Call] takes the model's raw JSON arguments, checks them against the
// input schema, decodes them into the input type, runs the handler and
// returns a [Result]: the message the model reads, the output value, and
// whether the call succeeded.
//
// # Errors: two channels
//
// What the model sees and what the program sees are different channels.
//
// A tool whose work failed returns a failed [Result] (Success false) with a
// message written for the model, so it can correct itself: arguments that do
// not fit the schema, an error the handler returned, and a handler that
// panicked all end up there, and Call's Go error is nil. The loop that runs
// the model passes these results back to it and carries on.
//
// Only infrastructure faults and control signals are Go errors: a handler
// wraps them with [Halt] (a store that went away, or a request to re-render
// the prompt), and Call returns them as they are, so errors.Is and errors.As
// work on them. A handler error while the caller's own context is cancelled
// or past its deadline is a Go error too: the caller asked to stop.
//
// # A failed call changes nothing
//
// A handler changes the session only by dispatching events to
// tc.Session, and [Tool.Call] makes those dispatches all-or-nothing: the
// handler gets a transaction's view of the session
// ([session.Session.Begin]), not the session itself. It reads its own
// events through it at once; the session sees them only when the call
// succeeds, all together, after whatever was dispatched meanwhile. When
// the call fails (the handler returned an error or panicked, a
// [RawHandler] returned a failed result, its output could not be encoded,
// or it returned a [Halt]), they are discarded, and
// the session's state and log are what they were before the call, but
// for a [CallFailed] event recording the failure (none for a Halt, which
// the program handles, nor for arguments the handler never saw).
//
// Other work on the session is untouched. Calls run concurrently on one
// session (an MCP server's do) each in their own transaction, and see each
// other's events once committed; code that holds the session itself
// dispatches to it directly: an orchestrator records every command an
// environment ran, failed ones included, since the command did run. A
// call made inside a handler with the handler's tc nests: it commits into
// the outer call's transaction, and goes if that one fails. A goroutine a
// handler leaves behind cannot write to the session after the call ended:
// its dispatches are refused with [session.ErrEnded].
//
// # Schemas
//
// The input type must be a struct, one without its own JSON or text encoding
// methods; the output type may be any type with a JSON form.
// github.com/google/jsonschema-go infers the schemas, with what it lacks
// added here, and inference follows encoding/json, so the schema describes
// what decoding accepts (null aside, see below):
//
//   - struct: "type":"object" with a property per field, named by its json
//     tag; fields tagged json:"-" and unexported fields are left out, embedded
//     structs without a json name are flattened; fields without omitempty or
//     omitzero are required; no other properties are allowed.
//   - a `description:"..."` tag (or jsonschema-go's `jsonschema:"..."`)
//     describes a field; an `enum:"a,b,c"` tag lists the values a string
//     field (or each item of a list of strings) may take.
//   - string, bool, integers ("integer", with the bounds of the sized types:
//     "minimum": 0 for unsigned ones, -128 to 127 for int8), floats and
//     json.Number ("number"); slices and arrays ("array", arrays with their
//     length as "minItems" and "maxItems"); []byte as a base64 string; maps
//     with string keys, or keys with MarshalText ("object" whose
//     "additionalProperties" is the element's schema); time.Time as a
//     "date-time" string; a field with the ",string" option as a string
//     whose "pattern" (or "enum", "true" and "false", for a boolean) and
//     description say what it holds, such as an integer like "42"; a value
//     it cannot take is refused naming the field and what to send.
//   - pointers as their element. A schema has one type, never a list: null
//     is not offered for pointers and slices, though it decodes into them,
//     since some model APIs take one type only.
//   - json.RawMessage, interfaces and types with their own MarshalJSON or
//     UnmarshalJSON accept any value ({}); types with MarshalText or
//     UnmarshalText accept a string.
//   - channels, functions, complex numbers, maps with other keys, recursive
//     types, and structs whose properties jsonschema-go and encoding/json
//     would name differently (an embedded field with a json name or that is
//     not a struct, two fields with one JSON name, a json name encoding/json
//     ignores) have no schema: New fails with a [TypeError] that names the
//     field.
//
// The schemas are JSON Schema draft 2020-12 objects without a "$schema" key,
// since some model APIs reject it; for the same reason a schema that allows
// any value is written {}, not true.
//
// # Validation
//
// Call validates the arguments with the input schema before decoding them,
// so a wrong type or a misspelled field is reported rather than silently
// dropped or zeroed. Messages name the field by its JSON pointer and say what
// is wrong, for example:
//
//	Invalid arguments: section_keys/0: expected string, but got number
//
// When several things are wrong, the message lists the first few in path
// order and says how many more there are. Arguments longer than [MaxArgs]
// bytes are refused unread, and so are numbers too long or too large for any
// Go number type (over 100 characters, or an exponent beyond ±400). The cost
// of a call with bad arguments stays proportional to their size: a flood of
// problems is counted, not collected.
//
// # Names
//
// Tool names must match ^[a-zA-Z0-9_-]{1,64}$, the rule the major model APIs
// share; [ValidName] checks it.
//
// # Hints
//
// [Tool.WithHints] gives a tool [Hints]: whether its calls only read, may
// destroy, may be repeated without further effect, reach beyond a closed
// domain. Front ends pass them on (the MCP server as tool annotations); a
// tool without them is taken to be [AssumedHints], as MCP assumes. The
// help tool only reads. [Tool.WithInputDescriptions] describes a tool's
// input fields in other words, as for one environment's limits.
//
// # Built-in tools and exports
//
// [NewHelp] makes a self-describing help tool: it lists what a prompt offers
// (environments and their commands, tools, sections that can be opened) from
// a [HelpIndex] the caller supplies, and with a query filters and recommends
// (from the query's first 64 different words; a query is a few words).
// [NewShell] runs shell commands under a [ShellPolicy]. Each command is
// parsed (mvdan.cc/sh) and every command it would run is checked, through
// pipelines, substitutions, functions, wrappers such as env, xargs and
// find -exec, and the text sh -c and eval run: against a default blocklist
// ([ShellRules]), or an allowlist that names the programs that may run.
// What the check cannot see through is refused. Where the kernel offers
// Landlock, the command's processes may write only in the working
// directory and the temporary directory. There is a dry-run and an
// explicit unsafe mode. [OpenAITools], [AnthropicTools] and [MCPTools]
// export a tool set in each API's format (MCP's with the annotations of the
// tools that carry hints).
package tools

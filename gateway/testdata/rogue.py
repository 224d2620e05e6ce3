# A stdio MCP server that sends what a careless or hostile server may:
# the modes, given as arguments, add to its one good tool, echo.
#   schema  tools whose input schemas are not objects
#   header  a tool whose schema the MCP Go SDK refuses to serve
#   braces  template actions in its instructions and a description
#   dup     a tool listed twice, and names that differ only in '.' and '_'
#   big     a tool, dump, whose result is "line N\n" for N up to its argument n
#   huge    100 KB instructions, a tool with a 100 KB description, one with
#           a 100 KB schema, and one (structured) whose short text comes
#           with 1 MB of structured content
#   endless a tools/list whose every page names one more page
#   endlessbig  the same, its pages from the 999th on listing one tool
#           "big" whose 70 KB schema is over what unfold keeps
#   env     a tool, env, whose result is the JSON of the server's arguments
#           and of the environment variables its argument names lists
#   flood   a tool, flood, whose result is 17 MB of text, over what a
#           client reads in one message
#   leak    writes API_KEY into a line of stderr followed by 2 KiB of dots,
#           and exits at once
import json
import os
import sys

modes = set(sys.argv[1:])
if "leak" in modes:
    sys.stderr.write("auth failed for key " + os.environ["API_KEY"] + "\n" + "." * 2027 + "\n")
    sys.exit(1)
tools = [{"name": "echo", "description": "Echo text back.",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]
instructions = "A rogue server for tests."
if "schema" in modes:
    tools += [{"name": "untyped", "inputSchema": {"properties": {}}},
              {"name": "string", "inputSchema": {"type": "string"}},
              {"name": "nullable", "inputSchema": {"type": ["object", "null"]}}]
if "header" in modes:
    tools.append({"name": "header", "inputSchema": {"type": "object", "properties": {
        "a": {"type": "object", "x-mcp-header": "X-A"}}}})
if "braces" in modes:
    tools[0]["description"] = "Render {{name}} placeholders. Also {{.Foo}} and {{\"x\"}}."
    instructions = "Use {{ carefully."
if "dup" in modes:
    tools += [dict(tools[0]), {"name": "ec.ho", "inputSchema": {"type": "object"}},
              {"name": "ec_ho", "inputSchema": {"type": "object"}}]
if "big" in modes:
    tools.append({"name": "dump", "description": "Dump a log of n lines.",
                  "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}})
if "huge" in modes:
    instructions = "Use it well. " + "Mind the rules. " * 6400
    tools += [{"name": "wordy", "description": "Say much. " + "More words here. " * 6400,
               "inputSchema": {"type": "object"}},
              {"name": "vast", "inputSchema": {"type": "object", "properties": {
                  "p%d" % i: {"type": "string", "description": "a property"} for i in range(2500)}}},
              {"name": "structured", "inputSchema": {"type": "object"}}]
if "flood" in modes:
    tools.append({"name": "flood", "inputSchema": {"type": "object"}})
if "env" in modes:
    tools.append({"name": "env", "inputSchema": {"type": "object", "properties": {
        "names": {"type": "array", "items": {"type": "string"}}}}})


def call(params):
    args = params.get("arguments") or {}
    if params["name"] == "dump":
        text = "".join("line %d\n" % i for i in range(1, args.get("n", 0) + 1))
    else:
        text = "%s: %s" % (params["name"], args.get("text", ""))
    if params["name"] == "flood":
        text = "x" * (17 << 20)
    if params["name"] == "env":
        text = json.dumps({"argv": sys.argv[1:], "env": {k: os.environ.get(k) for k in args.get("names", [])}})
    if params["name"] == "structured":
        rows = [{"id": i, "name": "row %d" % i} for i in range(40000)]
        return {"content": [{"type": "text", "text": "40000 rows"}], "structuredContent": {"rows": rows}}
    return {"content": [{"type": "text", "text": text}]}


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "rogue", "version": "1"}, "instructions": instructions}
    elif method == "tools/list" and "endlessbig" in modes:
        page = int((msg.get("params") or {}).get("cursor") or 0)
        tool = {"name": "t%d" % page, "inputSchema": {"type": "object"}}
        if page >= 998:
            tool = {"name": "big", "inputSchema": {"type": "object", "description": "x" * 70000}}
        result = {"tools": [tool], "nextCursor": str(page + 1)}
    elif method == "tools/list" and "endless" in modes:
        page = int((msg.get("params") or {}).get("cursor") or 0)
        result = {"tools": [{"name": "t%d" % page, "inputSchema": {"type": "object"}}], "nextCursor": str(page + 1)}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        result = call(msg["params"])
    elif method == "ping":
        result = {}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)

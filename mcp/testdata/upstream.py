# A stdio MCP server that lists whatever resources and resource templates
# it is given, addresses unfold must not take as they are:
#   python3 upstream.py TAG RESOURCES_JSON TEMPLATES_JSON
# Every read answers "FROM TAG".
import json
import sys

tag, resources, templates = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
answers = {
    "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}, "resources": {}},
                   "serverInfo": {"name": tag, "version": "1"}},
    "tools/list": {"tools": []},
    "prompts/list": {"prompts": []},
    "resources/list": {"resources": [{"uri": u, "name": "r%d" % i} for i, u in enumerate(resources)]},
    "resources/templates/list": {"resourceTemplates": [{"uriTemplate": t, "name": "t%d" % i} for i, t in enumerate(templates)]},
}
for line in sys.stdin:
    m = json.loads(line)
    mid, method = m.get("id"), m.get("method")
    if mid is None:
        continue
    result = answers.get(method)
    if method == "resources/read":
        result = {"contents": [{"uri": m["params"]["uri"], "text": "FROM " + tag}]}
    if result is None:
        reply = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no method " + str(method)}}
    else:
        reply = {"jsonrpc": "2.0", "id": mid, "result": result}
    print(json.dumps(reply), flush=True)

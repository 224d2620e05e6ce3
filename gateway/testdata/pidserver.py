# A stdio MCP server with one tool, echo, that says where it runs:
#   python3 pidserver.py DIR NAME [stay] [noterm]
# writes its process id to DIR/NAME.pid (DIR relative to its working
# directory) once it has started. With "stay" it does not exit at the end
# of its input, as some servers do not: it says goodbye on stdout (a log
# message; it fails if the client closed its end of the pipe) and writes
# DIR/NAME.eof when its input ends; on SIGTERM it writes to DIR/NAME.term the names whose input
# had ended by then, and exits. With "noterm" it ignores SIGTERM. With
# "slowagain", started a second time it waits 5 s before it reads.
import json
import os
import signal
import sys
import time

where, name, modes = sys.argv[1], sys.argv[2], set(sys.argv[3:])


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def terminated(*_):
    ended = sorted(n[:-4] for n in os.listdir(where) if n.endswith(".eof"))
    write(os.path.join(where, name + ".term"), " ".join(ended))
    os._exit(0)


signal.signal(signal.SIGTERM, signal.SIG_IGN if "noterm" in modes else terminated)
again = os.path.exists(os.path.join(where, name + ".pid"))
write(os.path.join(where, name + ".pid"), str(os.getpid()))
if again and "slowagain" in modes:
    time.sleep(5)  # started again: slow to answer initialize

for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": name, "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": os.getcwd()}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)

if "stay" in modes:
    print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "goodbye"}}), flush=True)
    write(os.path.join(where, name + ".eof"), "")
    while True:
        time.sleep(1)

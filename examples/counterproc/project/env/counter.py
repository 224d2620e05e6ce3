"""A counter environment for unfold, speaking the process-environment protocol.

The orchestrator writes one JSON request per line on stdin (execute, screen,
shutdown) and reads one JSON reply per line on stdout. See
docs/process-environments.md.
"""

import json
import signal
import sys
import time

# Stdout belongs to the protocol: keep the real stream for replies and send
# anything printed by accident to stderr.
PROTOCOL = sys.stdout
sys.stdout = sys.stderr

COMMANDS = [
    ("add <n>", "add n to the counter"),
    ("sub <n>", "subtract n from the counter"),
    ("reset", "set the counter to 0"),
    ("wait <seconds>", "wait, then report; an interrupt cuts the wait short"),
]


class Counter:
    def __init__(self):
        self.value = 0
        self.history = []

    def execute(self, text):
        """Run each line of text as a command, stopping at the first failure;
        return (output, success)."""
        lines = [line for line in text.splitlines() if line.strip()] or [""]
        outputs = []
        for line in lines:
            output, ok = self.execute_line(line)
            outputs.append(output)
            if not ok:
                return "\n".join(outputs), False
        return "\n".join(outputs), True

    def execute_line(self, command):
        """Run one command; return (output, success)."""
        words = command.split()
        if not words:
            return "Empty command. " + self.usage(), False
        name, args = words[0], words[1:]
        if name in ("add", "sub"):
            if len(args) != 1:
                return f"{name} takes one number, like: {name} 5", False
            try:
                n = int(args[0])
            except ValueError:
                return f"Not a number: {args[0]!r}. Use a whole number, like: {name} 5", False
            self.value += n if name == "add" else -n
            self.history.append(command.strip())
            return f"Counter: {self.value}", True
        if name == "reset":
            self.value = 0
            self.history.append("reset")
            return "Counter: 0", True
        if name == "wait":
            try:
                seconds = float(args[0])
            except (IndexError, ValueError):
                return "wait takes a number of seconds, like: wait 2", False
            try:
                time.sleep(seconds)
            except KeyboardInterrupt:
                return f"Interrupted while waiting; the counter is still {self.value}", False
            return f"Waited {seconds:g}s", True
        return f"Unknown command: {name}. " + self.usage(), False

    def usage(self):
        return "Commands: " + ", ".join(sig for sig, _ in COMMANDS)

    def screen(self):
        lines = [f"Counter: {self.value}"]
        if self.history:
            lines.append("Recent: " + "; ".join(self.history[-3:]))
        lines.append("")
        lines.append("Commands:")
        for sig, desc in COMMANDS:
            lines.append(f"  {sig} - {desc}")
        return "\n".join(lines)


def reply(message):
    PROTOCOL.write(json.dumps(message) + "\n")
    PROTOCOL.flush()


def main():
    counter = Counter()
    while True:
        try:
            line = sys.stdin.readline()
        except KeyboardInterrupt:
            # An interrupt between commands: nothing to stop.
            continue
        if not line:
            return
        try:
            request = json.loads(line)
            kind = request["type"]
        except (ValueError, KeyError, TypeError) as e:
            reply({"type": "error", "message": f"bad request: {e}"})
            continue
        if kind == "execute":
            try:
                output, ok = counter.execute(request.get("command", ""))
            except KeyboardInterrupt:
                output, ok = "Interrupted", False
            reply({"type": "response", "output": output, "success": ok})
        elif kind == "screen":
            reply({"type": "screen", "content": counter.screen(), "max_lines": 20})
        elif kind == "shutdown":
            return
        else:
            reply({"type": "error", "message": f"unknown request type: {kind}"})


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()

"""The pexpect side of bench/compare: a persistent bash driven by pexpect.

It starts one `bash --norc --noprofile` under pexpect with a unique marker
prompt, then reads one number per line on stdin and runs that many round
trips of `true` (sendline, then expect the marker), answering one JSON line
with the nanoseconds of each. delaybeforesend is None, as the comparison
asks: pexpect's default sleeps 50 ms before every send.
"""
import json
import sys
import time

import pexpect

MARKER = "__UNFOLD_PEXPECT_MARK__"


def main():
    child = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile"],
        env={"TERM": "dumb", "PATH": "/usr/local/bin:/usr/bin:/bin", "PS1": "", "PS2": ""},
        encoding="utf-8",
        echo=False,
        timeout=30,
    )
    child.delaybeforesend = None
    child.sendline("PS1='" + MARKER[:2] + "''" + MARKER[2:] + "'; PS2=''")
    child.expect_exact(MARKER)
    for line in sys.stdin:
        n = int(line)
        ns = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            child.sendline("true")
            child.expect_exact(MARKER)
            ns.append(time.perf_counter_ns() - t0)
        sys.stdout.write(json.dumps({"ns": ns}) + "\n")
        sys.stdout.flush()
    child.close(force=True)


if __name__ == "__main__":
    main()

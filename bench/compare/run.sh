#!/usr/bin/env bash
# Compare unfold with the tools users would pick instead, side by side in
# one run, and write bench/RESULTS.md.
#
#   bench/compare/run.sh                 # every workload, 5 rounds
#   ROUNDS=9 bench/compare/run.sh -only render,budget
#
# The peers are installed at run time into a temporary directory that is
# removed at the end: @vscode/prompt-tsx, gpt-tokenizer, js-tiktoken and
# js-yaml from npm, and Debian's python3-pexpect (apt-get, when the system Python
# lacks it). Nothing of theirs stays in the tree. Needs go, node and npm;
# takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

for tool in go node npm bash grep; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done

work="$(mktemp -d -t unfold-peers-XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo "run.sh: installing the npm peers into $work" >&2
(
  cd "$work"
  npm init -y >/dev/null
  npm install --no-audit --no-fund --loglevel=error @vscode/prompt-tsx gpt-tokenizer js-tiktoken js-yaml >/dev/null
)

python=/usr/bin/python3
if ! "$python" -c 'import pexpect' 2>/dev/null; then
  echo "run.sh: installing python3-pexpect" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3-pexpect >/dev/null
fi

echo "run.sh: building unfold and the comparison" >&2
go build -o "$work/unfold" ./cmd/unfold
go build -o "$work/compare" ./bench/compare

"$work/compare" -peers "$work" -scripts bench/compare -unfold "$work/unfold" \
  -python "$python" -rounds "${ROUNDS:-5}" -out bench/RESULTS.md \
  -command "ROUNDS=${ROUNDS:-5} bench/compare/run.sh $*" "$@"

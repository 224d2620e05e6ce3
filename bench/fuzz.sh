#!/usr/bin/env bash
# Fuzz every fuzz target in the module for a set time each.
#
#   bench/fuzz.sh                 # 30s per target
#   FUZZTIME=5m bench/fuzz.sh     # longer
#   bench/fuzz.sh ./envs/editor   # only the targets under these packages
#
# Targets are found by name (func FuzzX in a _test.go file), so new ones are
# picked up without editing this script. `go test` (and so CI) already runs
# every seed corpus as a normal test; this script is the long search. New
# failing inputs land in the package's testdata/fuzz/FuzzX directory: commit
# them, they become regression tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
fuzztime="${FUZZTIME:-30s}"
roots=("${@:-./}")

failed=()
count=0
while IFS=: read -r file _ decl; do
  name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")"
  pkg="./$(dirname "$file")"
  count=$((count + 1))
  echo "== $pkg $name ($fuzztime)"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"; then
    failed+=("$pkg $name")
  fi
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' "${roots[@]}" | sed 's|^\./||' | sort)

echo
echo "fuzzed $count targets for $fuzztime each"
if ((${#failed[@]})); then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi

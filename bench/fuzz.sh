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

log="$(mktemp -t unfold-fuzz-XXXXXX)"
trap 'rm -f "$log"' EXIT

# inputs counts the failing inputs saved for a target.
inputs() {
  [[ -d "$1/testdata/fuzz/$2" ]] || { echo 0; return; }
  find "$1/testdata/fuzz/$2" -type f | wc -l
}

failed=()
raced=()
count=0
while IFS=: read -r file _ decl; do
  name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")"
  pkg="./$(dirname "$file")"
  count=$((count + 1))
  echo "== $pkg $name ($fuzztime)"
  before="$(inputs "$pkg" "$name")"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"; then
    # Go 1.26's fuzzing coordinator can fail a target with a bare
    # "context deadline exceeded" as the fuzz time runs out, having found
    # nothing (go.dev/issue/75804, fixed in Go 1.27). A real failure
    # saves its input under testdata/fuzz.
    if [[ "$(inputs "$pkg" "$name")" == "$before" ]] &&
      grep -A1 -E "^--- FAIL: ${name} " "$log" | grep -qx '    context deadline exceeded'; then
      raced+=("$pkg $name")
    else
      failed+=("$pkg $name")
    fi
  fi
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' "${roots[@]}" | sed 's|^\./||' | sort)

echo
echo "fuzzed $count targets for $fuzztime each"
if ((${#raced[@]})); then
  printf "no failing input, stopped by the coordinator's deadline race (go.dev/issue/75804): %s\n" "${raced[@]}"
fi
if ((${#failed[@]})); then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi

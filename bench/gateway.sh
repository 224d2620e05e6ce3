#!/usr/bin/env bash
# Measure the MCP gateway and write its section of bench/RESULTS.md (the
# block between the gateway markers, below the line bench/compare keeps
# what follows of):
#
#   bench/gateway.sh
#
# The benchmarks run the reference MCP servers from npm (installed into
# the cache internal/npmcache uses, as the tests do). Each compares unfold
# with its baseline in the same run: the servers' own tool lists, direct
# calls, the servers' own clients.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
out=bench/RESULTS.md
tmp="$(mktemp)"
trap 'rm -f "$tmp" "$tmp.block"' EXIT

go test -run '^$' -bench 'ToolsListTokens' -benchtime 200x ./mcp | tee -a "$tmp"
go test -run '^$' -bench 'ProxiedCall' -benchtime 3000x ./mcp | tee -a "$tmp"
go test -run '^$' -bench 'ColdFirstCall' -benchtime 10x ./mcp | tee -a "$tmp"
go test -run '^$' -bench 'MCPStartupCached' -benchtime 50x ./cmd/unfold | tee -a "$tmp"

metric() { # metric BENCHMARK UNIT
  awk -v b="$1" -v u="$2" '$1 ~ "^"b"-" { for (i = 2; i < NF; i++) if ($(i+1) == u) print $i }' "$tmp"
}

{
  echo '<!-- gateway:begin -->'
  echo '## MCP gateway'
  echo
  echo "Written by \`bench/gateway.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC; node $(node --version), three reference servers from npm (server-everything, server-filesystem, server-memory; five for start-up: those and a second everything and memory). Tokens are o200k."
  echo
  echo '| measure | unfold | baseline (same run) | ratio or difference |'
  echo '| --- | ---: | ---: | ---: |'
  echo "| tools/list tokens at start | $(metric BenchmarkToolsListTokens unfold-tokens) | $(metric BenchmarkToolsListTokens eager-tokens) (the three servers' own lists) | $(metric BenchmarkToolsListTokens x-fewer)x fewer |"
  echo "| the same, with unfold's instructions (every server's tool names) | $(( $(metric BenchmarkToolsListTokens unfold-tokens | cut -d. -f1) + $(metric BenchmarkToolsListTokens unfold-instructions-tokens | cut -d. -f1) )) | $(metric BenchmarkToolsListTokens eager-tokens) | $(metric BenchmarkToolsListTokens x-fewer-with-instructions)x fewer |"
  echo "| call to a warm server (everything's echo), p50 | $(metric BenchmarkProxiedCall proxied-p50-us) µs | $(metric BenchmarkProxiedCall direct-p50-us) µs direct | +$(metric BenchmarkProxiedCall added-p50-us) µs |"
  echo "| the same, p99 | $(metric BenchmarkProxiedCall proxied-p99-us) µs | $(metric BenchmarkProxiedCall direct-p99-us) µs direct | +$(metric BenchmarkProxiedCall added-p99-us) µs |"
  echo "| cold first call (manifest cached, server started by the call), p50 | $(metric BenchmarkColdFirstCall unfold-p50-ms) ms | $(metric BenchmarkColdFirstCall own-client-p50-ms) ms (its own client starting it) | |"
  echo "| \`unfold mcp\` ready (first tools/list answered), five servers cached, p50 | $(metric BenchmarkMCPStartupCached ready-p50-ms) ms | | p99 $(metric BenchmarkMCPStartupCached ready-p99-ms) ms |"
  echo
  echo 'Raw:'
  echo
  echo '```'
  grep '^Benchmark' "$tmp"
  echo '```'
  echo '<!-- gateway:end -->'
} >"$tmp.block"

if grep -q '<!-- gateway:begin -->' "$out"; then
  awk -v block="$tmp.block" '
    /<!-- gateway:begin -->/ { while ((getline line < block) > 0) print line; skip = 1; next }
    /<!-- gateway:end -->/ { skip = 0; next }
    !skip { print }' "$out" >"$out.new"
  mv "$out.new" "$out"
else
  # After compare's marker, so that compare keeps the section.
  marker='<!-- kept by compare: sections below come from go test benchmarks -->'
  grep -qF "$marker" "$out" || printf '\n%s\n' "$marker" >>"$out"
  { echo; cat "$tmp.block"; } >>"$out"
fi
echo "gateway.sh: wrote the MCP gateway section of $out" >&2

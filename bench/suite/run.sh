#!/usr/bin/env bash
# Per-package CPU time of the test suite, immune to a shared machine's load:
#   bash bench/suite/run.sh OUTDIR short|full [package ...]
# builds each package's test binary (not timed), then runs the binaries one
# package at a time (as go test -p 1; tests inside a package keep their
# t.Parallel) under /usr/bin/time, from the package's directory as go test
# does. OUTDIR/summary has one line per package: wall s, user s, sys s, peak
# KiB, failures; OUTDIR/PKG.log the -test.v output (per-test times: grep '^--- ').
# On a busy machine compare CPU (user + sys) side by side, not wall. With
# SUITE_LOCK=FILE each binary runs under flock FILE (a machine whose users
# take turns for heavy runs); BIN=DIR runs test binaries built beforehand
# (DIR/PKG.test, slashes as underscores) instead of building them.
set -euo pipefail
mode=$2
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/bin"
cd "$root"
pkgs=("$@")
[ ${#pkgs[@]} -eq 0 ] && mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... | grep . | sed 's|^github.com/tracepriv/tracepriv/||')
flags=(-test.count=1 -test.v -test.timeout=40m)
[ "$mode" = short ] && flags+=(-test.short)
: > "$out/summary"
bin=${BIN:-$out/bin}
for rel in "${pkgs[@]}"; do
  name=${rel//\//_}
  [ -n "${BIN:-}" ] || go test -c -o "$bin/$name.test" "./$rel"
  cmd=(/usr/bin/time -f '%e %U %S %M' -o "$out/$name.time" "$bin/$name.test" "${flags[@]}")
  [ -n "${SUITE_LOCK:-}" ] && cmd=(flock "$SUITE_LOCK" "${cmd[@]}")
  ( cd "$rel" && "${cmd[@]}" > "$out/$name.log" 2>&1 ) || true
  echo "$rel $(tail -1 "$out/$name.time") $(grep -c -- '^--- FAIL' "$out/$name.log" || true)" >> "$out/summary"
done
awk '{cpu += $3 + $4} END {printf "total CPU %.1f s (user + sys) over %d packages\n", cpu, NR}' "$out/summary"

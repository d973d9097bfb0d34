#!/usr/bin/env bash
# Per-package CPU time of the test suite, immune to a shared machine's load:
#   bash bench/suite/run.sh OUTDIR short|full [package ...]
# builds each package's test binary (not timed), then runs the binaries one
# package at a time (as go test -p 1; tests inside a package keep their
# t.Parallel) under /usr/bin/time, from the package's directory as go test
# does. OUTDIR/summary has one line per package: wall s, user s, sys s, peak
# KiB, failures; OUTDIR/PKG.log the -test.v output (per-test times: grep '^--- ').
# On a busy machine compare CPU (user + sys) side by side, not wall.
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
for rel in "${pkgs[@]}"; do
  name=${rel//\//_}
  go test -c -o "$out/bin/$name.test" "./$rel"
  ( cd "$rel" && /usr/bin/time -f '%e %U %S %M' -o "$out/$name.time" "$out/bin/$name.test" "${flags[@]}" > "$out/$name.log" 2>&1 ) || true
  echo "$rel $(tail -1 "$out/$name.time") $(grep -c -- '^--- FAIL' "$out/$name.log" || true)" >> "$out/summary"
done
awk '{cpu += $3 + $4} END {printf "total CPU %.1f s (user + sys) over %d packages\n", cpu, NR}' "$out/summary"

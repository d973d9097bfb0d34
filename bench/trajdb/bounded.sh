#!/usr/bin/env bash
# paper_are of the n-gram tree's reconstructions, side by side, against
# all real sequences and against the bounded ones the mechanism saw
# (docs/trajdb.md, issue 34): full MSNBC, n_max 5, l_max 20, --max-seqs 1,
# query seed 1, RUNS runs at each epsilon. `--reconstruction authors`
# reproduces the authors' code on every measure (docs/trajdb.md), so it
# stands in for it here. Prints one JSON line per (run, epsilon,
# reconstruction, against), with the other measures of query_are,
# trip_jsd and length_jsd; bench/trajdb/summary.py makes the table.
# Usage: bench/trajdb/bounded.sh OUTDIR [RUNS] [EPSILONS] [RECONSTRUCTIONS]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1
runs=${2:-3}
epsilons=${3:-"0.1 0.5 1"}
recons=${4:-"persons joined authors"}
data=${MSNBC:-../shared/data/msnbc/msnbc.dat.gz}
mkdir -p "$out"
go build -o "$out/tracepriv" ./cmd/tracepriv
[ -f "$out/msnbc.seq" ] || gunzip -c "$data" >"$out/msnbc.seq"
for ((r = 1; r <= runs; r++)); do
	for eps in $epsilons; do
		for rec in $recons; do
			rel="$out/ngram-$rec-$eps-$r"
			"$out/tracepriv" release --in "$out/msnbc.seq" --alphabet 17 --base 1 --out "$rel" \
				--mechanism ngram --n-max 5 --max-len 20 --max-seqs 1 --epsilon "$eps" --reconstruction "$rec" \
				--seed "$r$RANDOM" --force --quiet >/dev/null 2>&1
			for against in all bounded; do
				"$out/tracepriv" evaluate --real "$out/msnbc.seq" --alphabet 17 --base 1 --released "$rel" \
					--max-len 20 --max-seqs 1 --query-seed 1 --seed "$r" --against "$against" --json --quiet 2>/dev/null |
					python3 -c "
import json, sys
ev = json.load(sys.stdin)
print(json.dumps(dict(reconstruction='$rec', epsilon=$eps, run=$r, against='$against', sequences=ev['released_sequences'],
    **{k: ev[k] for k in ['paper_are', 'query_are', 'trip_jsd', 'length_jsd', 'top_k_precision']})))"
			done
			rm -rf "$rel"
		done
	done
done

#!/bin/sh
# Power curves of the noise audits (docs/audit.md): for each mechanism and
# noise factor f, the number of seeded audits (seeds 1..SEEDS) that flag a
# violation, the range of epsilon_lower/epsilon and the mean time per audit.
# Usage: bench/audit/power.sh TRACEPRIV SEEDS "FACTORS"
# e.g.   bench/audit/power.sh ./tracepriv 10 "0.5 0.6 0.7 0.8 0.9 1"
set -eu
tp=$1; seeds=$2; factors=$3
search="--draws 1 --neighbour-draws 1 --max-removals -1 --max-additions -1 --confirm-neighbours -1"
run() { # name args...
	name=$1; shift
	for f in $factors; do
		start=$(date +%s.%N)
		s=1; out=""
		while [ $s -le "$seeds" ]; do
			out="$out$("$tp" "$@" --noise-factor "$f" --seed "$s" --json --quiet | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(int(d["violation"]), d["epsilon_lower"] / d["epsilon"])')
"
			s=$((s + 1))
		done
		end=$(date +%s.%N)
		printf '%s' "$out" | python3 -c "
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
k = sum(int(r[0]) for r in rows); e = [float(r[1]) for r in rows]
print('| $name | $f | %d/%d | %.3f-%.3f | %.2f s |' % (k, len(rows), min(e), max(e), ($end - $start) / len(rows)))"
	done
}
run "prefix (audit support, noise test)" audit support --mechanism prefix $search
run "ngram (audit support, noise test)" audit support --mechanism ngram $search
run planar-laplace audit noise --mechanism planar-laplace
run predictive audit noise --mechanism predictive
run cip audit noise --mechanism cip --draws 804

#!/usr/bin/env bash
# Our side of the MSNBC comparison in docs/trajdb.md: tracepriv's n-gram
# release (every reconstruction) and prefix release of the full MSNBC data
# (989,818 persons, one click sequence each) at n_max 5, l_max 20,
# --max-seqs 1, each timed with /usr/bin/time -v and measured by
# `tracepriv evaluate` against all real sequences with the same query seed,
# so every release (ours, and any other sequence file evaluated with the
# flags below) answers the same queries.
#
# Usage: bench/trajdb/run.sh [OUTDIR] [RUNS] [EPSILONS]
#   defaults: a temporary directory, 3 runs, "0.1 0.5 1"
# Needs ../shared/data/msnbc (see its README) and /usr/bin/time (Debian
# package "time"). Runs one job at a time: the machines are shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d)}
runs=${2:-3}
epsilons=${3:-"0.1 0.5 1"}
py=${PYTHON:-/usr/bin/python3}
data=${MSNBC:-../shared/data/msnbc/msnbc.dat.gz}
mkdir -p "$out"
go build -o "$out/tracepriv" ./cmd/tracepriv
gunzip -c "$data" >"$out/msnbc.seq"
: >"$out/results.jsonl"

# evaluate SEQFILE_OR_DIR LABEL EPS RUN TIMEFILE: one JSON line of results.
evaluate() {
	local rel=$1 label=$2 eps=$3 run=$4 timing=$5
	/usr/bin/time -v "$out/tracepriv" evaluate --real "$out/msnbc.seq" --alphabet 17 --base 1 \
		--released "$rel" --max-len 20 --max-seqs 1 --query-seed 1 --seed "$run" --json \
		>"$out/eval.json" 2>"$out/eval.time"
	"$py" - "$out/eval.json" "$timing" "$out/eval.time" "$label" "$eps" "$run" >>"$out/results.jsonl" <<'PY'
import json, re, sys
ev = json.load(open(sys.argv[1]))
def timing(path):
    t = open(path).read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1).split(":")
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
    cpu = float(re.search(r"User time \(seconds\): (\S+)", t).group(1)) + float(re.search(r"System time \(seconds\): (\S+)", t).group(1))
    return secs, cpu, rss / 1024
rw, rc, rm = timing(sys.argv[2])
ew, ec, em = timing(sys.argv[3])
keys = ["query_are", "trip_jsd", "length_jsd", "pattern_f1", "kendall_tau", "paper_are", "top_k_precision"]
print(json.dumps(dict(label=sys.argv[4], epsilon=float(sys.argv[5]), run=int(sys.argv[6]),
    sequences=ev["released_sequences"], release_s=rw, release_cpu_s=rc, release_mib=rm,
    evaluate_s=ew, evaluate_cpu_s=ec, evaluate_mib=em, **{k: ev[k] for k in keys})))
PY
}

for ((r = 1; r <= runs; r++)); do
	for eps in $epsilons; do
		for rec in persons joined authors; do
			rel="$out/ngram-$rec-$eps-$r"
			/usr/bin/time -v "$out/tracepriv" release --in "$out/msnbc.seq" --alphabet 17 --base 1 --out "$rel" \
				--mechanism ngram --n-max 5 --max-len 20 --max-seqs 1 --epsilon "$eps" --reconstruction "$rec" \
				--force >/dev/null 2>"$out/release.time"
			evaluate "$rel" "ngram ($rec)" "$eps" "$r" "$out/release.time"
		done
		if [ "$eps" = 1 ]; then
			rel="$out/prefix-$eps-$r"
			/usr/bin/time -v "$out/tracepriv" release --in "$out/msnbc.seq" --alphabet 17 --base 1 --out "$rel" \
				--mechanism prefix --max-len 20 --max-seqs 1 --epsilon "$eps" --force >/dev/null 2>"$out/release.time"
			evaluate "$rel" "prefix" "$eps" "$r" "$out/release.time"
		fi
	done
done

"$py" - "$out/results.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault((r["label"], r["epsilon"]), []).append(r)
cols = ["sequences", "query_are", "paper_are", "trip_jsd", "length_jsd", "pattern_f1", "top_k_precision", "kendall_tau",
        "release_s", "release_mib", "evaluate_s", "evaluate_mib"]
print("| mechanism | epsilon | runs | " + " | ".join(cols) + " |")
print("|---" * (len(cols) + 3) + "|")
for (label, eps), rs in sorted(groups.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
    cells = []
    for c in cols:
        v = [r[c] for r in rs]
        m = statistics.mean(v)
        cells.append(f"{m:,.0f}" if c == "sequences" else f"{m:.3g}" if c.endswith(("_s", "_mib")) else f"{m:.4f}")
    print(f"| {label} | {eps:g} | {len(rs)} | " + " | ".join(cells) + " |")
PY
echo "raw results: $out/results.jsonl" >&2

#!/usr/bin/env bash
# Side-by-side wall times of tracepriv's pure-Go SDP solver (package sdp),
# CVXOPT and, when installed, CSDP on identical SDPA data:
#   sdpa50    - the paper's SDP_A for a basic secret (RBF kernel on indices
#               0..49, l^2 = 36, unit variance, secret index 24, tr budget 1)
#   maxcut100 - max-cut relaxation of a fixed random graph, n = 100
# The Go side writes both problems (sdp/bench_test.go); every solver reads
# the same files. Rounds alternate between solvers because the machines are
# noisy; the table reports the fastest of the rounds. tracepriv runs twice:
# with the default GOMAXPROCS (gonum's dgemm uses every core) and with
# GOMAXPROCS=1, the like-for-like comparison with single-threaded CVXOPT.
#
# Usage: bench/sdp/run.sh [OUTDIR] [ROUNDS]   (needs python3-cvxopt)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d)}
rounds=${2:-3}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
SDP_BENCH_DIR=$out go test -count=1 -run TestWriteBenchProblems ./sdp >/dev/null
go build -o "$out/tracepriv" ./cmd/tracepriv
: >"$out/results.jsonl"
for ((r = 1; r <= rounds; r++)); do
	for f in sdpa50 maxcut100; do
		"$out/tracepriv" sdp solve --json "$out/$f.dat-s" |
			"$py" -c 'import json,sys; d=json.load(sys.stdin); d.update(file=sys.argv[1], solver="tracepriv"); print(json.dumps(d))' "$f" >>"$out/results.jsonl"
		GOMAXPROCS=1 "$out/tracepriv" sdp solve --json "$out/$f.dat-s" |
			"$py" -c 'import json,sys; d=json.load(sys.stdin); d.update(file=sys.argv[1], solver="tracepriv-1thread"); print(json.dumps(d))' "$f" >>"$out/results.jsonl"
		"$py" bench/sdp/cvxopt_bench.py "$out/$f.dat-s" |
			"$py" -c 'import json,sys; d=json.loads(sys.stdin.read()); d["file"]=sys.argv[1]; print(json.dumps(d))' "$f" >>"$out/results.jsonl"
		if command -v csdp >/dev/null; then
			"$py" - "$out/$f.dat-s" "$f" >>"$out/results.jsonl" <<'PY'
import json, re, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(["csdp", sys.argv[1]], capture_output=True, text=True)
dt = time.perf_counter() - t0
get = lambda k: float(re.search(k + r" objective value:\s*(\S+)", p.stdout).group(1))
print(json.dumps({"file": sys.argv[2], "solver": "csdp", "status": "rc=%d" % p.returncode,
                  "primal_objective": get("Primal"), "dual_objective": get("Dual"), "seconds": dt}))
PY
		fi
	done
done
"$py" - "$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in rows:
    k = (r["file"], r["solver"])
    if k not in best or r["seconds"] < best[k]["seconds"]:
        best[k] = r
print("| problem | solver | status | primal objective | dual objective | iterations | best wall s | ratio to tracepriv |")
print("|---|---|---|---|---|---|---|---|")
for f in ("sdpa50", "maxcut100"):
    go = best.get((f, "tracepriv"))
    for s in ("tracepriv", "tracepriv-1thread", "cvxopt", "csdp"):
        r = best.get((f, s))
        if r is None:
            continue
        ratio = r["seconds"] / go["seconds"] if go else float("nan")
        print("| %s | %s | %s | %.10g | %.10g | %s | %.3f | %.2f |" % (
            f, s, r["status"], r["primal_objective"], r["dual_objective"],
            r.get("iterations", "-"), r["seconds"], ratio))
PY
echo "raw results: $out/results.jsonl" >&2

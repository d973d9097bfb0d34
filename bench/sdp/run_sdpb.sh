#!/usr/bin/env bash
# Side-by-side wall times on the paper's SDP_B for Figure 2c at l_eff = 6.1
# (50 LMIs of order 50 over the 50 closed-form SDP_A designs, 1275
# variables): tracepriv's pure-Go solver, CSDP and CVXOPT on the same SDPA
# file (written by TestWriteSDPB2c in package cip). Rounds alternate
# between solvers because the machines are noisy; CVXOPT takes minutes, so
# the default is one round.
#
# Usage: bench/sdp/run_sdpb.sh [OUTDIR] [ROUNDS]   (needs python3-cvxopt, coinor-csdp)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d)}
rounds=${2:-1}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
CIP_BENCH_DIR=$out go test -count=1 -run TestWriteSDPB2c ./cip >/dev/null
go build -o "$out/tracepriv" ./cmd/tracepriv
f=$out/sdpb2c.dat-s
for ((r = 1; r <= rounds; r++)); do
	"$out/tracepriv" sdp solve --json "$f" |
		"$py" -c 'import json,sys; d=json.load(sys.stdin); print("tracepriv", d["status"], d["primal_objective"], d["iterations"], round(d["seconds"], 2))'
	if command -v csdp >/dev/null; then
		"$py" - "$f" <<'PY'
import re, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(["csdp", sys.argv[1]], capture_output=True, text=True)
dt = time.perf_counter() - t0
obj = re.search(r"Primal objective value:\s*(\S+)", p.stdout).group(1)
print("csdp", "rc=%d" % p.returncode, obj, "-", round(dt, 2))
PY
	fi
	"$py" bench/sdp/cvxopt_bench.py "$f" |
		"$py" -c 'import json,sys; d=json.load(sys.stdin); print("cvxopt", d["status"], d["primal_objective"], d["iterations"], round(d["seconds"], 2))'
done

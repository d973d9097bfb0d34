#!/usr/bin/env python3
"""Solve SDPA sparse files (.dat-s) with CVXOPT and report wall times.

Used by bench/sdp/run.sh to compare tracepriv's pure-Go solver (package sdp)
with CVXOPT on identical data: the Go side writes the problems as SDPA files
(go test -run TestWriteBenchProblems ./sdp with SDP_BENCH_DIR set).

The SDPA dual  min a^T y  s.t.  sum_i y_i A_i - C >= 0  is passed to
cvxopt.solvers.sdp as  min c^T x  s.t.  Gs x + ss = hs, Gl x + sl = hl
with c = a, Gs = -[vec A_i], hs = -C (diagonal blocks go to Gl, hl).
Objectives are printed in CSDP's signs (primal = tr(C X), dual = a^T y).

Usage: cvxopt_bench.py [--repeat N] [--tol T] FILE.dat-s...
Prints one JSON object per file on stdout.
"""
import argparse
import json
import re
import sys
import time

from cvxopt import matrix, solvers, spmatrix


def read_sdpa(path):
    with open(path) as f:
        lines = [l for l in f if l.strip() and l.strip()[0] not in '"*']
    clean = lambda s: re.sub(r"[{}(),]", " ", s).split()
    m = int(clean(lines[0])[0])
    nblocks = int(clean(lines[1])[0])
    blocks = [int(float(t)) for t in clean(lines[2])[:nblocks]]
    rest = lines[3:]
    toks, i = [], 0
    while len(toks) < m:
        toks += clean(rest[i])
        i += 1
    a = [float(t.replace("D", "e").replace("d", "e")) for t in toks[:m]]
    entries = []
    for line in rest[i:]:
        f = clean(line)
        entries.append((int(f[0]), int(f[1]) - 1, int(f[2]) - 1, int(f[3]) - 1,
                        float(f[4].replace("D", "e").replace("d", "e"))))
    return m, blocks, a, entries


def to_cvxopt(m, blocks, a, entries):
    lp_off, nlp = {}, 0
    for b, s in enumerate(blocks):
        if s < 0:
            lp_off[b] = nlp
            nlp += -s
    gs = {b: ([], [], []) for b, s in enumerate(blocks) if s > 0}
    hs = {b: matrix(0.0, (s, s)) for b, s in enumerate(blocks) if s > 0}
    gl = ([], [], [])
    hl = matrix(0.0, (nlp, 1))
    for mat, b, i, j, v in entries:
        s = blocks[b]
        if s < 0:
            r = lp_off[b] + i
            if mat == 0:
                hl[r] += -v
            else:
                gl[0].append(-v); gl[1].append(r); gl[2].append(mat - 1)
            continue
        if mat == 0:
            hs[b][i, j] += -v
            if i != j:
                hs[b][j, i] += -v
            continue
        # Column-major vec of the full symmetric matrix (both triangles).
        vals, rows, cols = gs[b]
        vals.append(-v); rows.append(j * s + i); cols.append(mat - 1)
        if i != j:
            vals.append(-v); rows.append(i * s + j); cols.append(mat - 1)
    c = matrix(a)
    Gs = [spmatrix(gs[b][0], gs[b][1], gs[b][2], (blocks[b] ** 2, m)) for b in sorted(gs)]
    Hs = [hs[b] for b in sorted(hs)]
    kw = {}
    if nlp:
        kw["Gl"] = spmatrix(gl[0], gl[1], gl[2], (nlp, m))
        kw["hl"] = hl
    return c, Gs, Hs, kw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tol", type=float, default=0,
                    help="set abstol, reltol and feastol (0: CVXOPT defaults)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    solvers.options["show_progress"] = False
    if args.tol > 0:
        for k in ("abstol", "reltol", "feastol"):
            solvers.options[k] = args.tol
    for path in args.files:
        c, Gs, Hs, kw = to_cvxopt(*read_sdpa(path))
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            sol = solvers.sdp(c, Gs=Gs, hs=Hs, **kw)
            times.append(time.perf_counter() - t0)
        print(json.dumps({
            "file": path,
            "solver": "cvxopt",
            "status": sol["status"],
            "primal_objective": sol["dual objective"],
            "dual_objective": sol["primal objective"],
            "iterations": sol["iterations"],
            "seconds": min(times),
            "seconds_all": times,
        }))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

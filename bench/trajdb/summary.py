#!/usr/bin/env python3
"""The table of docs/trajdb.md from bench/trajdb/bounded.sh's JSON lines
(stdin): per epsilon and reconstruction, the mean (min-max) over runs of
the sequences and of paper_are against all and against the bounded data,
and the means of the other measures against all."""
import json
import sys

rows = [json.loads(l) for l in sys.stdin if l.strip().startswith("{")]
groups = {}
for r in rows:
    groups.setdefault((r["epsilon"], r["reconstruction"]), {}).setdefault(r["against"], []).append(r)


def cell(vals, fmt):
    mean = sum(vals) / len(vals)
    return f"{mean:{fmt}} ({min(vals):{fmt}}–{max(vals):{fmt}})"


print("| ε | release | runs | sequences (persons 989,818) | paper_are against all | paper_are against bounded | query_are | trip_jsd | length_jsd | top_k_precision |")
print("|---|---|---|---|---|---|---|---|---|---|")
order = {"authors": 0, "persons": 1, "joined": 2}
label = {"authors": "`authors` (the authors' code)", "persons": "`persons` (default)", "joined": "**`joined`**"}
for (eps, rec), by in sorted(groups.items(), key=lambda kv: (-kv[0][0], order.get(kv[0][1], 9))):
    a, b = by.get("all", []), by.get("bounded", [])
    seqs = [r["sequences"] for r in a or b]
    mean = lambda rs, k: sum(r[k] for r in rs) / len(rs)
    print(f"| {eps:g} | {label.get(rec, rec)} | {len(seqs)} | {cell(seqs, ',.0f')} | {cell([r['paper_are'] for r in a], '.4f')} | "
          f"{cell([r['paper_are'] for r in b], '.4f')} | {mean(a, 'query_are'):.3f} | {mean(a, 'trip_jsd'):.3f} | "
          f"{mean(a, 'length_jsd'):.3f} | {mean(a, 'top_k_precision'):.3f} |")

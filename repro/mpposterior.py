#!/usr/bin/env python3
"""High-precision cross-check of the misspecified panels (Figure 2d/2h).

Reads the JSON that repro.CIPSensitivity writes (the float64 adversary priors
and noise designs exactly as the Go code built them) and writes, at `dps`
decimal digits with mpmath:

* cases:   the posterior 2-sigma of the secret for each (prior, design,
           nugget), from the same float64 matrices (the absolute nugget is
           added to the diagonal in IEEE double, as Go does), so that the
           only difference from Go's number is the arithmetic;
* exact:   the same quantity for the mathematical problem: the kernel and
           the basic-secret SDP_A optimum (rank one, closed form) computed
           at high precision from the lengthscale, at the precision the
           problem needs (raised until the prior's smallest eigenvalue is
           resolved; a prior that is singular at any precision, the periodic
           kernel's repeated points, is pseudo-inverted, which is the limit
           of a vanishing nugget);
* authors: the authors' get_posterior_cov (figure_2.py): a ridge of 1e-6 x
           mean(diag) on the prior and on the noise, then the posterior;
* priors:  the extreme eigenvalues of the stored float64 prior and of the
           exact kernel matrix.

Only mpmath is needed. Usage: mpposterior.py IN.json OUT.json
"""

import json
import sys

import mpmath as mp


def to_mp(rows):
    return mp.matrix([[mp.mpf(x) for x in r] for r in rows])


def kernel(kind, n, period, l):
    l = mp.mpf(l)
    m = mp.matrix(n, n)
    for a in range(n):
        for b in range(n):
            if kind == "rbf":
                m[a, b] = mp.exp(-mp.mpf(a - b) ** 2 / (2 * l * l))
            else:
                s = mp.sin(mp.pi * abs(a - b) / mp.mpf(period))
                m[a, b] = mp.exp(-2 * s * s / (l * l))
    return m


def closed_form_design(sigma, i, budget):
    """SDP_A's optimum for the basic secret {i}, as read back by the authors:
    budget/(1+|A|^2) (A A^T on U, 1 on i), A = Sigma_ui / Sigma_ii."""
    n = sigma.rows
    a = [sigma[j, i] / sigma[i, i] for j in range(n)]
    a[i] = mp.mpf(1)
    norm = mp.fsum(x * x for x in a)
    g = mp.matrix(n, n)
    for r in range(n):
        for c in range(n):
            if (r == i) != (c == i):
                continue  # the read-back drops the cross terms
            g[r, c] = budget * a[r] * a[c] / norm
    return g


def posterior_var(sigma, g, i):
    """Sigma_ii - s_i^T (Sigma + G)^-1 s_i by LU, or None if singular."""
    m = sigma + g
    try:
        x = mp.lu_solve(m, sigma[:, i])
    except ZeroDivisionError:
        return None
    return sigma[i, i] - mp.fsum(sigma[k, i] * x[k] for k in range(sigma.rows))


def posterior_var_pinv(sigma, g, i, rel):
    """The same with the pseudo-inverse of Sigma + G (eigenvalues below rel x
    the largest dropped)."""
    m = sigma + g
    ev, q = mp.eigsy(m)
    top = max(abs(e) for e in ev)
    s = sigma[:, i]
    proj = [mp.fsum(q[k, j] * s[k] for k in range(m.rows)) for j in range(m.rows)]
    quad = mp.fsum(proj[j] ** 2 / ev[j] for j in range(m.rows) if ev[j] > rel * top)
    dropped = sum(1 for e in ev if not e > rel * top)
    return sigma[i, i] - quad, dropped


def two_sigma(v):
    if v is None or v < 0:
        return None
    return float(2 * mp.sqrt(v))


def eig_extremes(m):
    ev = mp.eigsy(m, eigvals_only=True)
    return min(ev), max(ev)


def add_diag(m, d):
    out = m.copy()
    for k in range(m.rows):
        out[k, k] += d
    return out


MAX_DPS = 240


def exact_case(inp, l, scale, nugget, base_dps):
    """Posterior 2-sigma of the exact problem; returns a dict."""
    n, i = inp["n"], inp["secret"]
    dps = base_dps
    while True:
        with mp.workdps(dps):
            design_prior = kernel(inp["kernel"], n, inp["period"], l)
            g = closed_form_design(design_prior, i, mp.mpf(inp["budget"]))
            adv = kernel(inp["kernel"], n, inp["period"], mp.mpf(scale) * mp.mpf(l))
            mean = mp.fsum(adv[k, k] for k in range(n)) / n
            adv = add_diag(adv, mp.mpf(nugget) * mean)
            lo, hi = eig_extremes(adv)
            out = {"dps": dps, "eig_min": float(lo), "eig_max": float(hi)}
            # The solve keeps about dps - log10(cond) digits; keep 40.
            need = int(mp.ceil(mp.log10(hi / lo))) + 40 if lo > 0 else None
            if need is not None and need <= dps:
                v = posterior_var(adv, g, i)
                out.update(two_sigma=two_sigma(v), variance=None if v is None else float(v))
                return out
            if dps >= MAX_DPS:
                rel = mp.mpf(10) ** (-(dps - 25))
                if lo > rel * hi:
                    # Positive definite but too ill-conditioned for MAX_DPS.
                    out.update(two_sigma=None, variance=None, error="condition number beyond %d digits" % dps)
                    return out
                # Singular at every precision tried (the periodic kernel's
                # repeated points): the limit of a vanishing nugget is the
                # pseudo-inverse formula.
                v, dropped = posterior_var_pinv(adv, g, i, rel)
                out.update(two_sigma=two_sigma(v), variance=float(v), pseudo_inverse=True, dropped=dropped)
                return out
        dps = min(MAX_DPS, max(2 * dps, need or 0))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: mpposterior.py IN.json OUT.json")
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    dps = int(inp.get("dps", 80))
    mp.mp.dps = dps
    i = inp["secret"]
    out = {"mpmath": mp.__version__, "python": sys.version.split()[0], "dps": dps, "points": []}
    for pt in inp["points"]:
        priors = [p["matrix"] for p in pt["priors"]]
        designs = [to_mp(d["matrix"]) for d in pt["designs"]]
        res = {"cases": [], "exact": [], "authors": [], "priors": []}
        for p in pt["priors"]:
            lo, hi = eig_extremes(to_mp(p["matrix"]))
            res["priors"].append({"stored_eig_min": float(lo), "stored_eig_max": float(hi)})
        for c in pt["cases"]:
            rows = [list(r) for r in priors[c["prior"]]]
            for k in range(len(rows)):
                rows[k][k] = float(rows[k][k]) + float(c["nugget_abs"])  # IEEE double, as in Go
            v = posterior_var(to_mp(rows), designs[c["design"]], i)
            res["cases"].append({"two_sigma": two_sigma(v), "variance": None if v is None else float(v)})
        for c in pt["exact"]:
            res["exact"].append(exact_case(inp, pt["l"], c["scale"], c["nugget"], dps))
        for c in pt["authors"]:
            s = to_mp(priors[c["prior"]])
            g = designs[c["design"]]
            n = s.rows
            ms = mp.fsum(s[k, k] for k in range(n)) / n
            mg = mp.fsum(g[k, k] for k in range(n)) / n
            v = posterior_var(add_diag(s, mp.mpf(c["prior_ridge"]) * ms), add_diag(g, mp.mpf(c["noise_ridge"]) * mg), i)
            res["authors"].append({"two_sigma": two_sigma(v), "variance": None if v is None else float(v)})
        out["points"].append(res)
        print("point done", file=sys.stderr, flush=True)
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()

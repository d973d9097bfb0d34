// runCases drives the module's API (globalThis.tracepriv) through the
// cases of wasm_test.go, in Node.js and in Chromium alike, and returns
// every answer as the module gave it, with the time each call took.
globalThis.runCases = function (tp, input) {
  const now = () => performance.now();
  const out = { version: tp.version, sessions: [], releases: [] };
  for (const c of input.sessions) {
    const t0 = now();
    const s = c.seed === null ? tp.newSession(c.config) : tp.newSession(c.config, c.seed);
    if (typeof s === "string") { out.sessions.push({ error: s }); continue; }
    const answers = [], ms = [];
    for (const [lat, lon, at] of c.queries) {
      const q0 = now();
      answers.push(s.query(lat, lon, at));
      ms.push(now() - q0);
    }
    out.sessions.push({ answers, ms, state: s.state(), total_ms: now() - t0 });
  }
  if (input.designs) {
    // Envelope designs a page stored, given back before the releases.
    const t0 = now();
    out.use_design = input.designs.map((d) => tp.useDesign(d.key, d.doc));
    out.use_design_ms = now() - t0;
  }
  for (const r of input.releases) {
    const t0 = now();
    if (r.plan) {
      // Charge before draw: the plan (the certificate and its digest), then the draw for a
      // charge id never used before in this module.
      const p = r.seed === null ? tp.planRelease(r.trace, r.format, r.options) : tp.planRelease(r.trace, r.format, r.options, r.seed);
      if (typeof p === "string") { out.releases.push({ answer: p, ms: now() - t0 }); continue; }
      const t1 = now();
      const answer = p.draw("c-bench-" + t0 + "-" + Math.random());
      out.releases.push({ answer, ms: now() - t0, plan_ms: t1 - t0, draw_ms: now() - t1, planned_sha256: p.certificate_sha256,
        design: p.design || "", design_key: p.design_key || "" });
      continue;
    }
    const answer = r.seed === null ? tp.release(r.trace, r.format, r.options) : tp.release(r.trace, r.format, r.options, r.seed);
    out.releases.push({ answer, ms: now() - t0 });
  }
  return out;
};

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
  for (const r of input.releases) {
    const t0 = now();
    const answer = r.seed === null ? tp.release(r.trace, r.format, r.options) : tp.release(r.trace, r.format, r.options, r.seed);
    out.releases.push({ answer, ms: now() - t0 });
  }
  return out;
};

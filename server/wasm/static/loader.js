// tracepriv's loader for the WebAssembly module: it loads the Go runtime
// (wasm_exec.js) and the module from the directory it was loaded from,
// each checked against the digest the server pinned (subresource
// integrity: the browser refuses bytes that differ), and resolves to the
// module's API, globalThis.tracepriv (cmd/tracepriv-wasm; docs/device.md).
//
//   <script src="/wasm/loader.js" integrity="sha256-…"></script>
//   const tp = await traceprivLoad();
//   const s = tp.newSession(configJSON);
//
// The page's Content-Security-Policy must allow 'wasm-unsafe-eval' in
// script-src for the browser to compile the module.
"use strict";
(function () {
  const WASM_INTEGRITY = "__TRACEPRIV_WASM_INTEGRITY__";
  const EXEC_INTEGRITY = "__TRACEPRIV_EXEC_INTEGRITY__";
  const base = new URL(".", (document.currentScript && document.currentScript.src) || location.href);
  let loading = null;

  function script(src, integrity) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = src;
      s.integrity = integrity;
      s.onload = resolve;
      s.onerror = () => reject(new Error("tracepriv: " + src + " did not load (or its digest is not " + integrity + ")"));
      document.head.appendChild(s);
    });
  }

  // traceprivLoad returns a promise of the module's API; it loads the
  // module once.
  globalThis.traceprivLoad = function () {
    if (loading) return loading;
    loading = (async () => {
      if (typeof globalThis.Go !== "function") await script(new URL("wasm_exec.js", base).href, EXEC_INTEGRITY);
      const go = new globalThis.Go();
      const ready = new Promise((resolve) => { globalThis.__traceprivReady = resolve; });
      const resp = await fetch(new URL("tracepriv.wasm", base).href, { integrity: WASM_INTEGRITY, credentials: "same-origin" });
      if (!resp.ok) throw new Error("tracepriv: the module answered HTTP " + resp.status);
      const { instance } = await WebAssembly.instantiateStreaming(resp, go.importObject);
      go.run(instance); // runs until the page goes away
      await ready;
      return globalThis.tracepriv;
    })();
    return loading;
  };
})();

// node node.js WASM_EXEC_JS MODULE INPUT_JSON: runs the module in Node.js
// and prints runCases's output as JSON.
"use strict";
const fs = require("fs");
const path = require("path");
globalThis.fs ??= fs;
require(process.argv[2]);
require(path.join(__dirname, "cases.js"));
const input = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
const go = new Go();
globalThis.__traceprivReady = () => {
  const out = runCases(globalThis.tracepriv, input);
  fs.writeSync(1, JSON.stringify(out));
  process.exit(0);
};
WebAssembly.instantiate(fs.readFileSync(process.argv[3]), go.importObject)
  .then((r) => go.run(r.instance))
  .catch((err) => { console.error(err); process.exit(1); });

//go:build js && wasm

// Command tracepriv-wasm is tracepriv's mechanisms as a WebAssembly module
// for a browser (GOOS=js GOARCH=wasm): it registers globalThis.tracepriv, a
// small JSON-in, JSON-out API over package device, and keeps running so
// that the page can call it. tracepriv serve serves the built module at
// /wasm/tracepriv.wasm (package server/device; docs/device.md).
//
//	const s = tracepriv.newSession(configJSON)          // or newSession(configJSON, seed): seeded, NOT private
//	const a = JSON.parse(s.query(lat, lon, Date.now())) // {report, state, randomness, private} or {error}
//	localStorage.setItem("state", JSON.stringify(a.state))
//	const r = JSON.parse(tracepriv.release(bytes, "plt", optionsJSON)) // {trace, certificate, certificate_sha256, ...}
//
// Charged on the service before drawing (docs/device.md):
//
//	const p = tracepriv.planRelease(bytes, "plt", optionsJSON)  // nothing drawn yet
//	const c = await charge(p.charge())                          // POST /v1/people/{id}/charges
//	const r = JSON.parse(p.draw(c.charge_id))                   // once per charge_id
//	const s = tracepriv.newChargedSession(configJSON, chargeID) // a session paid by one geoind charge
//	localStorage.setItem("tracepriv.design." + p.design_key, p.design) // the envelope, for the next page load:
//	tracepriv.useDesign(key, localStorage.getItem("tracepriv.design." + key)) // {} or {"error"}: proven again, or refused
//
// Every call returns a JSON string; a failure is {"error": "..."} (and, for
// a spent budget, "exhausted": true), so nothing throws across the
// boundary. Randomness is crypto/rand, which on js/wasm is the browser's
// crypto.getRandomValues.
package main

import (
	"encoding/json"
	"errors"

	"syscall/js"

	"github.com/tracepriv/tracepriv/device"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("version", device.Version())
	api.Set("newSession", js.FuncOf(newSession))
	api.Set("resumeSession", js.FuncOf(resumeSession))
	api.Set("release", js.FuncOf(release))
	api.Set("planRelease", js.FuncOf(planRelease))
	api.Set("newChargedSession", js.FuncOf(newChargedSession))
	api.Set("claims", js.FuncOf(func(js.Value, []js.Value) any { return device.Claims() }))
	api.Set("restoreClaims", js.FuncOf(restoreClaims))
	api.Set("useDesign", js.FuncOf(useDesign))
	js.Global().Set("tracepriv", api)
	// A loader waiting for the API is told it is there.
	if cb := js.Global().Get("__traceprivReady"); cb.Type() == js.TypeFunction {
		cb.Invoke()
	}
	select {} // serve calls until the page goes away
}

// fail is the JSON of an error.
func fail(err error) any {
	b, _ := json.Marshal(struct {
		Error     string `json:"error"`
		Exhausted bool   `json:"exhausted,omitempty"`
	}{err.Error(), device.Exhausted(err)})
	return string(b)
}

// seedArg returns args[i] as a seed when it is a number: a seeded call.
func seedArg(args []js.Value, i int) (int64, bool) {
	if len(args) <= i || args[i].Type() != js.TypeNumber {
		return 0, false
	}
	return int64(args[i].Float()), true
}

// newSession(configJSON[, seed]) returns a session object or {"error"}.
func newSession(_ js.Value, args []js.Value) any {
	if len(args) < 1 {
		return `{"error":"newSession(configJSON[, seed]): the configuration is missing"}`
	}
	var s *device.Session
	var err error
	if seed, ok := seedArg(args, 1); ok {
		s, err = device.NewSeededSession(args[0].String(), seed)
	} else {
		s, err = device.NewSession(args[0].String())
	}
	if err != nil {
		return fail(err)
	}
	return sessionObject(s)
}

// resumeSession(stateJSON) continues a stored session.
func resumeSession(_ js.Value, args []js.Value) any {
	if len(args) < 1 {
		return `{"error":"resumeSession(stateJSON): the state is missing"}`
	}
	s, err := device.ResumeSession(args[0].String())
	if err != nil {
		return fail(err)
	}
	return sessionObject(s)
}

// sessionObject wraps s for JavaScript: query(lat, lon, unixMillis) and
// state().
func sessionObject(s *device.Session) js.Value {
	o := js.Global().Get("Object").New()
	o.Set("query", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 3 {
			return `{"error":"query(lat, lon, unixMillis): three numbers"}`
		}
		a, err := s.Query(args[0].Float(), args[1].Float(), int64(args[2].Float()))
		if err != nil {
			return fail(err)
		}
		return a
	}))
	o.Set("state", js.FuncOf(func(js.Value, []js.Value) any {
		st, err := s.State()
		if err != nil {
			return fail(err)
		}
		return st
	}))
	return o
}

// release(bytes, format, optionsJSON[, seed]) sanitises a recorded trace;
// bytes is a Uint8Array or a string.
func release(_ js.Value, args []js.Value) any {
	if len(args) < 3 {
		return `{"error":"release(bytes, format, optionsJSON[, seed]): three arguments"}`
	}
	var data []byte
	if args[0].Type() == js.TypeString {
		data = []byte(args[0].String())
	} else {
		data = make([]byte, args[0].Get("length").Int())
		js.CopyBytesToGo(data, args[0])
	}
	var out []byte
	var err error
	if seed, ok := seedArg(args, 3); ok {
		out, err = device.ReleaseSeeded(data, args[1].String(), args[2].String(), seed)
	} else {
		out, err = device.Release(data, args[1].String(), args[2].String())
	}
	if err != nil {
		return fail(err)
	}
	return string(out)
}

// bytesArg reads a Uint8Array or a string argument.
func bytesArg(v js.Value) []byte {
	if v.Type() == js.TypeString {
		return []byte(v.String())
	}
	data := make([]byte, v.Get("length").Int())
	js.CopyBytesToGo(data, v)
	return data
}

// planRelease(bytes, format, optionsJSON[, seed]) plans a release without
// drawing: an object with certificate_sha256, certificate, charge() (the
// charge request's JSON) and draw(chargeID), or {"error"}.
func planRelease(_ js.Value, args []js.Value) any {
	if len(args) < 3 {
		return `{"error":"planRelease(bytes, format, optionsJSON[, seed]): three arguments"}`
	}
	data := bytesArg(args[0])
	var p *device.Plan
	var err error
	if seed, ok := seedArg(args, 3); ok {
		p, err = device.PlanReleaseSeeded(data, args[1].String(), args[2].String(), seed)
	} else {
		p, err = device.PlanRelease(data, args[1].String(), args[2].String())
	}
	if err != nil {
		return fail(err)
	}
	o := js.Global().Get("Object").New()
	o.Set("certificate_sha256", p.CertificateSHA256())
	o.Set("certificate", p.Certificate())
	o.Set("charge", js.FuncOf(func(js.Value, []js.Value) any { return p.Charge() }))
	// The envelope design to store (localStorage) under design_key and give
	// back to useDesign on the next page load; "" when there is none.
	o.Set("design", p.Design())
	key := ""
	if d := p.Design(); d != "" {
		key, _ = device.DesignKey(d)
	}
	o.Set("design_key", key)
	o.Set("draw", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 1 || args[0].Type() != js.TypeString {
			return `{"error":"draw(chargeID): the charge_id the service answered"}`
		}
		out, err := p.Draw(args[0].String())
		if err != nil {
			return failCharged(err)
		}
		return string(out)
	}))
	return o
}

// newChargedSession(configJSON, chargeID) starts a session paid by the
// service's geoind charge chargeID, once.
func newChargedSession(_ js.Value, args []js.Value) any {
	if len(args) < 2 || args[1].Type() != js.TypeString {
		return `{"error":"newChargedSession(configJSON, chargeID): the configuration and the charge_id"}`
	}
	s, err := device.NewChargedSession(args[0].String(), args[1].String())
	if err != nil {
		return failCharged(err)
	}
	return sessionObject(s)
}

// restoreClaims(listJSON) restores the charge ids claims() returned.
func restoreClaims(_ js.Value, args []js.Value) any {
	if len(args) < 1 {
		return `{"error":"restoreClaims(listJSON): the list is missing"}`
	}
	if err := device.RestoreClaims(args[0].String()); err != nil {
		return fail(err)
	}
	return `{}`
}

// useDesign(key, designJSON) takes back an envelope design a plan's
// design gave (stored under its design_key): {} when it is used, or
// {"error"} when it is refused (then drop it; the next release designs the
// envelope again).
func useDesign(_ js.Value, args []js.Value) any {
	if len(args) < 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return `{"error":"useDesign(key, designJSON): the key and the document a plan's design gave"}`
	}
	if err := device.UseDesign(args[0].String(), args[1].String()); err != nil {
		return fail(err)
	}
	return `{}`
}

// failCharged is fail with "charged": true when the charge already paid
// for a draw.
func failCharged(err error) any {
	b, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Charged bool   `json:"charged,omitempty"`
	}{err.Error(), errors.Is(err, device.ErrCharged)})
	return string(b)
}

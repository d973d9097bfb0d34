package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/tracepriv/tracepriv/device"
)

// TestSessionConfigIsTheService checks that the configuration the ledger
// gives a device (config.geoind.session_config) is the person's geoind
// configuration byte for byte, and that a device session accepts it: the
// session a geoind charge pays for on the device is the service's.
func TestSessionConfigIsTheService(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	tok := e.createPerson(map[string]any{"id": "sc", "epsilon_budget": 0.02,
		"geoind": map[string]any{"mechanism": "pm", "manager": "fixed-rate", "rate": 0.002, "max_speed_kmh": 50}})
	l := e.ledgerOf("sc", tok)
	p, err := e.srv.lookupPerson(t.Context(), "sc")
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(p.cfg.Geoind)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(l.Config.Geoind.SessionConfig); got != string(want) {
		t.Fatalf("session_config %s, the person's geoind configuration %s", got, want)
	}
	if _, err := device.NewSession(string(l.Config.Geoind.SessionConfig)); err != nil {
		t.Errorf("a device refuses the service's session configuration: %v", err)
	}
}

// TestChargeThenDrawOnce runs the device's side of a charge against the
// service: a planned release is charged (its exact certificate digest), the
// device draws it; the same charge replayed (the same Idempotency-Key, as
// after the service died between its commit and its answer) gets the same
// charge_id and no second charge, and the device refuses to draw again for
// it. An over-budget charge is refused by the service, so the device never
// gets a charge id to draw with.
func TestChargeThenDrawOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, SQLite, nil)
	tok := e.createPerson(map[string]any{"id": "dd", "epsilon_budget": 0.02, "account": map[string]any{"epsilon_budget": 4.5}})
	plt, err := os.ReadFile("../internal/sample/synth-1/commute.plt")
	if err != nil {
		t.Fatal(err)
	}
	l := e.ledgerOf("dd", tok)
	opts := fmt.Sprintf(`{"epsilon":1,"lambda":%v,"radius_m":%v}`, l.Account.Lambda, l.Account.RadiusM)
	plan, err := device.PlanRelease(plt, "plt", opts)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(plan.Charge()), &body); err != nil {
		t.Fatal(err)
	}
	key := newKey()
	first := e.charge("dd", tok, key, body)
	if first.status != 201 {
		t.Fatalf("charge: %d %s", first.status, first.body)
	}
	id, _ := first.json(t)["charge_id"].(string)
	out, err := plan.Draw(id)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Digest string `json:"certificate_sha256"`
	}
	if err := json.Unmarshal(out, &r); err != nil || r.Digest != body["certificate_sha256"] {
		t.Fatalf("drawn certificate %q, charged %v (%v)", r.Digest, body["certificate_sha256"], err)
	}
	again := e.charge("dd", tok, key, body)
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || again.json(t)["charge_id"] != id {
		t.Fatalf("replayed charge: %d %s", again.status, again.body)
	}
	replan, err := device.PlanRelease(plt, "plt", opts)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := replan.Draw(id); !errors.Is(err, device.ErrCharged) || out != nil {
		t.Errorf("a replayed charge drew again: %v", err)
	}
	if l := e.ledgerOf("dd", tok); len(l.Charges) != 1 || l.Charges[0].CertificateSHA256 != r.Digest || l.Charges[0].Origin != "device" {
		t.Errorf("the ledger after a charge and its replay: %+v", l.Charges)
	}
	// Over budget: refused before the device has anything to draw with.
	big := map[string]any{}
	for k, v := range body {
		big[k] = v
	}
	big["epsilon"] = 100.0
	if k := exhaustedKind(t, e.charge("dd", tok, newKey(), big)); k != "account" {
		t.Errorf("an over-budget charge refused by %q, want the account", k)
	}
}

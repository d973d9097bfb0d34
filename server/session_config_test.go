package server

import (
	"encoding/json"
	"testing"

	"github.com/tracepriv/tracepriv/device"
)

// TestSessionConfigIsTheService checks that the configuration the ledger
// gives a device (config.geoind.session_config) is the person's geoind
// configuration byte for byte, and that a device session accepts it: the
// session a geoind charge pays for on the device is the service's.
func TestSessionConfigIsTheService(t *testing.T) {
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

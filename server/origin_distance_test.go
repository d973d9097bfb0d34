package server

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// Issue 32: serve refused a point 3,433 km from its origin that geoind
// sanitize accepted. One library rule (geoind.CheckOriginDistance) decides
// for both: at each distance the server's locate and a geoind release of
// the same point from the same origin both answer, or both refuse.
func TestOriginDistanceOneRule(t *testing.T) {
	t.Parallel()
	origin := geo.Point{Lat: 39.9042, Lon: 116.4074}
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		tok := e.createPerson(map[string]any{"account": roomy, "id": "walker", "epsilon_budget": 1,
			"geoind": map[string]any{"origin": map[string]any{"lat": origin.Lat, "lon": origin.Lon}}})
		t0 := e.clock.Now()
		for i, km := range []float64{0.5, 500, 999, 1001, 3433} {
			p := geo.Destination(origin, 100, 1000*km)
			r := e.locate("walker", tok, p.Lat, p.Lon, t0.Add(time.Duration(i)*time.Second), newKey())
			served := r.status == 200
			if !served && r.status != 422 {
				t.Fatalf("%g km: status %d: %s", km, r.status, r.body)
			}
			cfg := geoind.Config{Mechanism: geoind.MechanismIndependent, Manager: geoind.ManagerFixedRate,
				Params: geoind.Params{Epsilon: 0.01}, Rate: 0.01, Origin: origin, Noise: geoind.PlanarLaplace{Grid: 1}}
			tr := &trace.Trace{UID: "w", Points: []trace.Point{{Time: t0, Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()}}}
			_, _, err := geoind.SanitizeByPerson(cfg, []*trace.Trace{tr}, nil, noise.Seeded(1))
			released := err == nil
			rule := geoind.CheckOriginDistance(origin, p) == nil
			if served != released || released != rule || rule != (km <= geoind.MaxOriginDistance/1000) {
				t.Errorf("%g km from the origin: served %v, released by geoind %v (%v), rule %v", km, served, released, err, rule)
			}
			if !served && fmt.Sprint(r.errCode(t)) == "" {
				t.Errorf("%g km: refusal without a code", km)
			}
		}
	})
}

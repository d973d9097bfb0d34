package sanitize

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// staleDims are phrases of the tangent-plane certificates (version 3 and
// before) that are false of noise in Earth-centred coordinates.
var staleDims = []string{"plane coordinate", "two coordinates", "east and north", "East and north"}

// The texts a person reads say what the release does: noise in
// Earth-centred coordinates, not on a plane, and no "common offset of
// variance 0 m^2" where there is none (the route is then bounded by the
// envelope's low frequencies). Checked on a release whose route needs a
// common offset and one whose envelope bounds it alone, and on the docs
// that describe the certificate.
func TestWordingIsTrue(t *testing.T) {
	t.Parallel()
	bundled, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	trs, _, err := trace.ReadFile("../internal/sample/"+sample.Path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[bool]bool{}
	for _, c := range []struct {
		name  string
		prior *prior.Prior
		tr    *trace.Trace
	}{{"short family", familyPrior(), walk(80, 39.98, 116.30)}, {"bundled prior", bundled, trs[0]}} {
		_, cert, err := Trace(c.tr, Options{Prior: c.prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)})
		if err != nil {
			t.Fatal(err)
		}
		pc := cert.Persons[0]
		offsets[pc.RouteNoiseM2 > 0] = true
		why := pc.Explanation
		if strings.Contains(why, "variance 0 m") || (pc.RouteNoiseM2 == 0) != strings.Contains(why, "no common offset is added") ||
			(pc.RouteNoiseM2 > 0) != strings.Contains(why, "a common offset of variance") {
			t.Errorf("%s: route noise %v m^2, explanation %q", c.name, pc.RouteNoiseM2, why)
		}
		b, err := json.Marshal(cert)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Coordinates != CoordinatesECEF || !strings.Contains(cert.Guarantee, "Earth-centred") {
			t.Errorf("%s: coordinates %q, guarantee %q", c.name, cert.Coordinates, cert.Guarantee)
		}
		for _, s := range staleDims {
			if strings.Contains(string(b), s) || strings.Contains(cert.Legend(), s) {
				t.Errorf("%s: the certificate says %q", c.name, s)
			}
		}
	}
	if !offsets[true] || !offsets[false] {
		t.Errorf("the cases should cover a route with and without a common offset: %v", offsets)
	}
	for _, f := range []string{"../README.md", "../docs/robust-cip.md", "../docs/cip-math.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"plane coordinate", "two coordinates split", "East and north are independent"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s still says %q of the certificate", f, s)
			}
		}
	}
}

package device_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/device"
)

// TestDesignReused checks the stored envelope design (issue 33): the
// document a plan hands out is taken back under its key, and a release
// planned after it is byte for byte the release planned before (the same
// certificate, the same seeded trace as ReleaseSeeded). A document that is
// corrupted, stored under another key, of another family, or forged (its
// weights lowered and its digest recomputed, so that only the domination
// proof can tell) is refused, and releases are unchanged after it.
func TestDesignReused(t *testing.T) {
	data := samplePLT(t)
	const opts = `{"epsilon":1,"lambda":2,"radius_m":100}`
	p1, err := device.PlanReleaseSeeded(data, "plt", opts, 9)
	if err != nil {
		t.Fatal(err)
	}
	doc := p1.Design()
	if doc == "" {
		t.Fatal("the bundled family's plan has no envelope design to store")
	}
	key, err := device.DesignKey(doc)
	if err != nil || len(key) != 64 {
		t.Fatalf("key %q: %v", key, err)
	}
	draws := 0
	release := func() (cert, trace string) {
		t.Helper()
		p, err := device.PlanReleaseSeeded(data, "plt", opts, 9)
		if err != nil {
			t.Fatal(err)
		}
		if p.Design() != doc {
			t.Fatal("the plan's design changed")
		}
		draws++
		b, err := p.Draw(fmt.Sprintf("design-test-%d", draws))
		if err != nil {
			t.Fatal(err)
		}
		r := decodeReleased(t, b)
		return r.Certificate, r.Trace
	}
	want, err := device.ReleaseSeeded(data, "plt", opts, 9)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		cert, tr := release()
		if cert != p1.Certificate() || tr != decodeReleased(t, want).Trace {
			t.Fatalf("%s: the release differs from the one planned before", when)
		}
	}
	if err := device.UseDesign(key, doc); err != nil {
		t.Fatal(err)
	}
	check("after the stored design was used")

	forge := func(scale float64, fixDigest bool) string {
		var s map[string]json.RawMessage
		json.Unmarshal([]byte(doc), &s)
		var d map[string]any
		json.Unmarshal(s["design"], &d)
		total := 0.0
		for _, c := range d["components"].([]any) {
			m := c.(map[string]any)
			m["weight"] = m["weight"].(float64) * scale
			total += m["weight"].(float64)
		}
		d["overhead"] = total
		body, _ := json.Marshal(d)
		s["design"] = body
		if fixDigest {
			sum := sha256.Sum256(body)
			s["sha256"], _ = json.Marshal(hex.EncodeToString(sum[:]))
		}
		out, _ := json.Marshal(s)
		return string(out)
	}
	other, err := device.PlanReleaseSeeded(data, "plt", `{"epsilon":1,"lambda":2,"radius_m":100,"prior":{"version":4,"kernel":"matern32","variance_m2":500,"lengthscale_s":600,"family":{"kernels":[`+
		`{"kernel":"matern12","lengthscale_min_s":60,"lengthscale_max_s":6000,"variance_min_m2":500},{"kernel":"matern32","lengthscale_min_s":60,"lengthscale_max_s":3600,"variance_min_m2":500}]}}}`, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ key, doc, why string }{
		"corrupted":                  {key, strings.Replace(doc, `"weight":`, `"weight":1`, 1), "corrupted"},
		"another key":                {strings.Repeat("0", 64), doc, "stored under"},
		"another family":             {key, other.Design(), "stored under"},
		"forged weights":             {key, forge(0.99, true), "does not dominate"},
		"forged, digest not updated": {key, forge(0.99, false), "corrupted"},
		"not JSON":                   {key, doc[:len(doc)/2], "not a design document"},
	} {
		err := device.UseDesign(c.key, c.doc)
		if !errors.Is(err, device.ErrDesignRefused) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want a refusal saying %q", name, err, c.why)
		}
	}
	check("after the refused designs")
}

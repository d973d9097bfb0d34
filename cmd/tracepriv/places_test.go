package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// sanitize --places-every-length reaches sanitize.Options.PlacesEveryLength:
// the certificate's places cover every Matérn member, with more noise;
// without it the places class states the epsilon against members shorter
// than the stay beside its own (shorter_members), and the text says it.
func TestSanitizePlacesEveryLengthFlag(t *testing.T) {
	dir, in, prior := samplePaths(t)
	args := func(out string, more ...string) []string {
		return append([]string{"sanitize", "--in", in, "--out", filepath.Join(dir, out), "--prior", prior,
			"--epsilon", "1", "--lambda", "2", "--radius", "100", "--origin", "39.9781,116.3268", "--seed", "5"}, more...)
	}
	places := func(v map[string]any) map[string]any {
		return v["secret_classes"].(map[string]any)["places"].(map[string]any)
	}
	rms := func(v map[string]any) float64 {
		return v["persons"].([]any)[0].(map[string]any)["rms_noise_m"].(float64)
	}
	def := riskRunJSON(t, args("a.plt")...)
	every := riskRunJSON(t, args("b.plt", "--places-every-length")...)
	pd, pe := places(def), places(every)
	if !strings.Contains(pe["covers"].(string), "every Matérn member") || pe["shorter_members"] != nil || rms(every) <= rms(def) {
		t.Errorf("--places-every-length: places %v, RMS %v against the default's %v", pe, rms(every), rms(def))
	}
	sm, ok := pd["shorter_members"].(map[string]any)
	if !ok || sm["epsilon"].(float64) <= pd["epsilon"].(float64) || strings.Contains(pd["covers"].(string), "every Matérn member") {
		t.Fatalf("default: places %v", pd)
	}
	stdout, stderr, err := run(t, args("c.plt")...)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.Contains(stdout, "stays longer than the member's lengthscale: epsilon up to") {
		t.Errorf("the text does not state the shorter members' epsilon:\n%s", stdout)
	}
}

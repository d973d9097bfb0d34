package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// samplePaths writes the bundled trace and prior into a temporary
// directory and returns their paths.
func samplePaths(t *testing.T) (dir, plt, prior string) {
	t.Helper()
	dir = t.TempDir()
	plt, prior = filepath.Join(dir, "in.plt"), filepath.Join(dir, "prior.json")
	if err := os.WriteFile(plt, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prior, sample.Prior, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, plt, prior
}

// The acceptance interface: the certificate's fields, every timestamp
// kept, every point a secret without --secrets; then the attack reads the
// release and its certificate.
func TestSanitizeAndAttack(t *testing.T) {
	dir, in, prior := samplePaths(t)
	out := filepath.Join(dir, "out.plt")
	v := riskRunJSON(t, "sanitize", "--in", in, "--out", out, "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "5")
	b, err := os.ReadFile(out + ".cert.json")
	if err != nil {
		t.Fatal(err)
	}
	var cert map[string]any
	if err := json.Unmarshal(b, &cert); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"epsilon_max", "lambda", "radius_m"} {
		riskNum(t, cert, k)
		if cert[k] != v[k] {
			t.Errorf("%s: certificate %v, stdout %v", k, cert[k], v[k])
		}
	}
	if e := riskNum(t, cert, "epsilon_max"); e > 1 || e < 0.999 {
		t.Errorf("epsilon_max %v, want the target 1", e)
	}
	if cert["method"] == "" || cert["randomness"] != "seeded:5" {
		t.Errorf("method %v, randomness %v", cert["method"], cert["randomness"])
	}
	orig, _, err := trace.ReadFile(in, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	san, _, err := trace.ReadFile(out, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secrets := cert["secrets"].([]any); len(secrets) != orig[0].Len() {
		t.Errorf("%d secrets for %d points", len(secrets), orig[0].Len())
	}
	if san[0].Len() != orig[0].Len() {
		t.Fatalf("%d points out of %d", san[0].Len(), orig[0].Len())
	}
	for i := range orig[0].Points {
		if !san[0].Points[i].Time.Equal(orig[0].Points[i].Time) {
			t.Fatalf("point %d: time %v, want %v", i, san[0].Points[i].Time, orig[0].Points[i].Time)
		}
	}
	a := riskRunJSON(t, "attack", "--in", out, "--truth", in, "--plot", filepath.Join(dir, "attack.svg"))
	tr := a["traces"].([]any)[0].(map[string]any)
	if got := riskNum(t, tr, "secret_points"); got != float64(orig[0].Len()) {
		t.Errorf("attack scored %v points", got)
	}
	rel, rec := riskNum(t, tr, "released_rmse_m"), riskNum(t, tr, "reconstructed_rmse_m")
	if !(rel > 0 && rec > 0) || math.IsNaN(rec) {
		t.Errorf("release RMSE %v, reconstruction %v", rel, rec)
	}
	if _, err := os.Stat(filepath.Join(dir, "attack.svg")); err != nil {
		t.Error(err)
	}
}

// Listed secrets by time: one basic secret uses the closed form.
func TestSanitizeListedSecret(t *testing.T) {
	dir, in, prior := samplePaths(t)
	orig, _, _ := trace.ReadFile(in, trace.ReadOptions{})
	secret := orig[0].Points[100].Time.Format("2006-01-02T15:04:05Z07:00")
	out := filepath.Join(dir, "one.plt")
	v := riskRunJSON(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "0.5",
		"--lambda", "4", "--radius", "50", "--secrets", secret, "--seed", "1", "--certificate", filepath.Join(dir, "c.json"))
	if v["method"] != "optimal-e2" || len(v["secrets"].([]any)) != 1 {
		t.Errorf("method %v, secrets %v", v["method"], v["secrets"])
	}
	if _, err := os.Stat(filepath.Join(dir, "c.json")); err != nil {
		t.Error(err)
	}
}

func TestSanitizeErrors(t *testing.T) {
	dir, in, prior := samplePaths(t)
	badPrior := filepath.Join(dir, "bad.json")
	os.WriteFile(badPrior, []byte(`{"version":1,"kernel":"rbf","variance_m2":1,"lengthscale_s":30,"typo":1}`), 0o644)
	base := func(extra ...string) []string {
		return append([]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "o.plt"), "--prior", prior,
			"--epsilon", "1", "--lambda", "2", "--radius", "100"}, extra...)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sanitize", "--in", in, "--out", "x.plt"}, "--prior is required"},
		{append(base(), "--secrets", "2001-01-01T00:00:00Z"), "not the time of a point"},
		{append(base(), "--secrets", "yesterday"), "neither an RFC 3339"},
		{[]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "o.gpx"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}, "keeps the input format"},
		{[]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "o.plt"), "--prior", badPrior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}, "typo"},
		{[]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "o.plt"), "--prior", prior, "--epsilon", "1", "--lambda", "1", "--radius", "100"}, "lambda > 1"},
	} {
		err := riskRunErr(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args[len(c.args)-2:], err, c.want)
		}
	}
}

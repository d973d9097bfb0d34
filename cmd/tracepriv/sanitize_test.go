package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
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

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The acceptance interface: the certificate's fields, every timestamp
// kept, the noise covariance of --noise-out, and an independent (E1) check
// of that covariance against the family's ends.
func TestSanitizeInterface(t *testing.T) {
	t.Parallel()
	dir, in, prior := samplePaths(t)
	out, cov := filepath.Join(dir, "out.plt"), filepath.Join(dir, "noise.csv")
	v := riskRunJSON(t, "sanitize", "--in", in, "--out", out, "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "5", "--noise-out", cov)
	cert := readJSON(t, out+".cert.json")
	for _, k := range []string{"epsilon_max", "lambda", "radius_m", "skipped_rows"} {
		riskNum(t, cert, k)
		if cert[k] != v[k] {
			t.Errorf("%s: certificate %v, stdout %v", k, cert[k], v[k])
		}
	}
	if e := riskNum(t, cert, "epsilon_max"); e > 1 || e < 0.999 {
		t.Errorf("epsilon_max %v, want the target 1", e)
	}
	// Issue 22's interface: secret_classes, private, meaning,
	// prior_family.kernels, persons[i].rms_noise_m.
	classes := cert["secret_classes"].(map[string]any)
	for _, k := range []string{"points", "places", "route"} {
		c := classes[k].(map[string]any)
		if e := riskNum(t, c, "epsilon"); e > riskNum(t, cert, "epsilon_max") || !(e > 0) {
			t.Errorf("secret_classes.%s.epsilon %v against epsilon_max %v", k, e, cert["epsilon_max"])
		}
	}
	if cert["private"] != false {
		t.Errorf("a seeded release says private %v", cert["private"])
	}
	mean := cert["meaning"].(map[string]any)
	if mu, acc := riskNum(t, mean, "gdp_mu"), riskNum(t, mean, "best_guess_accuracy"); math.Abs(mu-1) > 1e-6 || math.Abs(acc-0.6915) > 1e-3 {
		t.Errorf("meaning: mu %v, accuracy %v; want 1 and Phi(1/2) = 0.6915 at epsilon 1, lambda 2", mu, acc)
	}
	if rms := riskNum(t, cert["persons"].([]any)[0].(map[string]any), "rms_noise_m"); !(rms > 100 && rms < 1000) {
		t.Errorf("persons[0].rms_noise_m %v", rms)
	}
	kernels := cert["prior_family"].(map[string]any)["kernels"].([]any)
	fam := kernels[0].(map[string]any)
	for _, k := range kernels {
		if k.(map[string]any)["kernel"] == "matern32" {
			fam = k.(map[string]any)
		}
	}
	lmin, lmax := riskNum(t, fam, "lengthscale_min_s"), riskNum(t, fam, "lengthscale_max_s")
	if fam["kernel"] != "matern32" || !(lmin > 0 && lmax > lmin) || len(kernels) < 2 {
		t.Errorf("prior_family.kernels %v", kernels)
	}
	if o := cert["origin"].(map[string]any); o["source"] != "prior" {
		t.Errorf("origin %v", o)
	}
	if cert["randomness"] != "seeded:5" {
		t.Errorf("randomness %v", cert["randomness"])
	}
	orig, _, err := trace.ReadFile(in, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	san, _, err := trace.ReadFile(out, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := orig[0].Len()
	if san[0].Len() != n {
		t.Fatalf("%d points out of %d", san[0].Len(), n)
	}
	for i := range orig[0].Points {
		if !san[0].Points[i].Time.Equal(orig[0].Points[i].Time) {
			t.Fatalf("point %d: time %v, want %v", i, san[0].Points[i].Time, orig[0].Points[i].Time)
		}
	}
	m, err := readMatrix(cov)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := m.Symmetric(0)
	if err != nil {
		t.Fatal(err)
	}
	if gs.SymmetricDim() != n {
		t.Fatalf("noise covariance of order %d for %d points", gs.SymmetricDim(), n)
	}
	// Independent check: the literal (E1) of the written covariance under
	// the family's ends, at a few points.
	ts, err := gp.Seconds(orig[0].Times())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []float64{lmin, lmax} {
		sigma := gp.Gram(gp.Matern32{Variance: riskNum(t, fam, "variance_min_m2"), Lengthscale: l}, ts)
		for _, i := range []int{0, n / 2, n - 1} {
			lf, err := cip.LossFactorDirect(sigma, gs, cip.Basic(i))
			if err != nil {
				t.Fatal(err)
			}
			if e := cip.Epsilon(lf, 2, 100, 1); e > riskNum(t, cert, "epsilon_max")*(1+1e-7) {
				t.Errorf("lengthscale %g, point %d: epsilon %v above the certificate", l, i, e)
			}
		}
	}
	a := riskRunJSON(t, "attack", "--in", out, "--truth", in, "--plot", filepath.Join(dir, "attack.svg"))
	rec, rel, within := riskNum(t, a, "rmse_m"), riskNum(t, a, "release_rmse_m"), riskNum(t, a, "within_radius_fraction")
	if !(rec > 0 && rec <= rel) || within < 0 || within > 1 || len(a["persons"].([]any)) != 1 {
		t.Errorf("attack: reconstruction %v m, release %v m, within %v", rec, rel, within)
	}
	if _, err := os.Stat(filepath.Join(dir, "attack.svg")); err != nil {
		t.Error(err)
	}
}

// Two segments of one person in a GPX file are one privacy unit.
func TestSanitizeSegmentsOnePerson(t *testing.T) {
	dir, in, prior := samplePaths(t)
	orig, _, err := trace.ReadFile(in, trace.ReadOptions{UID: "000"})
	if err != nil {
		t.Fatal(err)
	}
	a := &trace.Trace{UID: "000", Name: "a", Points: orig[0].Points[:60]}
	b := &trace.Trace{UID: "000", Name: "b", Points: orig[0].Points[64:120]}
	gpx := filepath.Join(dir, "two.gpx")
	if err := trace.WriteFile(gpx, []*trace.Trace{a, b}, trace.GPX); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "two.out.gpx")
	v := riskRunJSON(t, "sanitize", "--in", gpx, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "2")
	persons := v["persons"].([]any)
	if len(persons) != 1 {
		t.Fatalf("%d persons", len(persons))
	}
	p := persons[0].(map[string]any)
	if riskNum(t, p, "points") != 116 || len(p["traces"].([]any)) != 2 || riskNum(t, p, "epsilon_max") > 1 {
		t.Errorf("person %v", p)
	}
}

// Listed secrets by time under a family: the envelope bound, listed.
func TestSanitizeListedSecret(t *testing.T) {
	dir, in, prior := samplePaths(t)
	orig, _, _ := trace.ReadFile(in, trace.ReadOptions{})
	secret := orig[0].Points[100].Time.Format(time.RFC3339)
	out := filepath.Join(dir, "one.plt")
	v := riskRunJSON(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "0.5",
		"--lambda", "4", "--radius", "50", "--secrets", secret, "--seed", "1", "--certificate", filepath.Join(dir, "c.json"))
	p := v["persons"].([]any)[0].(map[string]any)
	if v["design"] != "envelope" || len(p["secret_list"].([]any)) != 1 {
		t.Errorf("design %v, secrets %v", v["design"], p["secret_list"])
	}
	if _, err := os.Stat(filepath.Join(dir, "c.json")); err != nil {
		t.Error(err)
	}
}

// Outputs are safe: never over the input, never over an existing file
// without --force, and the trace lands with its certificate or not at all.
func TestSanitizeOutputs(t *testing.T) {
	dir, in, prior := samplePaths(t)
	args := func(out string, extra ...string) []string {
		return append([]string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q"}, extra...)
	}
	before, _ := os.ReadFile(in)
	if err := riskRunErr(t, args(in)...); err == nil || !strings.Contains(err.Error(), "is the input") {
		t.Errorf("--out = --in: %v", err)
	}
	if after, _ := os.ReadFile(in); string(after) != string(before) {
		t.Fatal("the input was modified")
	}
	out := filepath.Join(dir, "o.plt")
	if err := riskRunErr(t, args(out)...); err != nil {
		t.Fatal(err)
	}
	if err := riskRunErr(t, args(out)...); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing output: %v", err)
	}
	if err := riskRunErr(t, args(out, "--force")...); err != nil {
		t.Errorf("--force: %v", err)
	}
	// A certificate that cannot be written: neither file lands.
	out2 := filepath.Join(dir, "o2.plt")
	if err := riskRunErr(t, args(out2, "--certificate", filepath.Join(dir, "no", "such", "dir", "c.json"))...); err == nil {
		t.Error("unwritable certificate accepted")
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("the trace was written without its certificate: %v", err)
	}
	// --noise-out refuses more than one person (a file declared a corpus).
	multi := filepath.Join(dir, "multi.csv")
	os.WriteFile(multi, []byte("uid,time,lat,lon\na,2008-10-24T02:00:00Z,39.98,116.30\na,2008-10-24T02:00:05Z,39.98,116.31\nb,2008-10-24T02:00:00Z,39.97,116.30\n"), 0o644)
	err := riskRunErr(t, "sanitize", "--in", multi, "--out", filepath.Join(dir, "m.out.csv"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--noise-out", filepath.Join(dir, "n.csv"), "--corpus")
	if err == nil || !strings.Contains(err.Error(), "2 people") {
		t.Errorf("--noise-out with 2 people: %v", err)
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
		{append(base(), "--secrets", "2001-01-01T00:00:00Z"), "--secrets"},
		{append(base(), "--secrets", "yesterday"), "neither an RFC 3339"},
		{[]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "o.gpx"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}, "keeps the input format"},
		{[]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "o.plt"), "--prior", badPrior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}, "typo"},
		{append(base(), "--lambda", "1"), "--lambda"},
		{append(base(), "--radius", "1e7"), "--radius 1e+07"},
		{append(base(), "--epsilon", "1e-12"), "--epsilon"},
		{append(base(), "--epsilon", "NaN"), "--epsilon"},
		{append(base(), "--origin", "91,2.35"), "--origin"},
		{append(base(), "--design", "e3"), "--design"},
	} {
		err := riskRunErr(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args[len(c.args)-2:], err, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "o.plt")); err == nil {
			t.Fatalf("%v: output written despite the error", c.args[len(c.args)-2:])
		}
	}
}

// The library behind --secrets and --noise-out: secret times parse as the
// command documents them, and the noise covariance in input order is the
// certificate's time-ordered covariance with rows and columns permuted.
func TestSanitizeLibraryHelpers(t *testing.T) {
	list, err := sanitize.ParseSecretTimes("2008-10-24T02:10:04Z, 1224814209;2008-10-24T02:10:14+00:00")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || len(list[1]) != 2 || !list[1][0].Equal(time.Date(2008, 10, 24, 2, 10, 9, 0, time.UTC)) {
		t.Errorf("parsed %v", list)
	}
	if _, err := sanitize.ParseSecretTimes("2008-10-24T02:10:04Z,,"); err == nil {
		t.Error("empty item accepted")
	}
	file, err := sanitize.ReadSecretTimes(strings.NewReader("# secrets\n\n2008-10-24T02:10:04Z\nnoon\n"), "s.txt")
	if err == nil || !strings.Contains(err.Error(), `s.txt:4: "noon" is neither`) {
		t.Errorf("bad line: %v, %v", file, err)
	}
	if _, err := sanitize.ReadSecretTimes(strings.NewReader("# none\n"), "e.txt"); err == nil || !strings.Contains(err.Error(), "e.txt: no secrets") {
		t.Errorf("empty file: %v", err)
	}

	// One person, two traces whose points interleave in time.
	t0 := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	mk := func(secs ...int) *trace.Trace {
		tr := &trace.Trace{UID: "p"}
		for _, s := range secs {
			tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(s) * time.Second), Lat: 39.98 + 1e-5*float64(s), Lon: 116.32})
		}
		return tr
	}
	traces := []*trace.Trace{mk(10, 20, 40), mk(5, 15, 30)}
	prior, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	_, cert, err := sanitize.Release(traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	in, err := cert.InputNoiseCovariance(traces)
	if err != nil {
		t.Fatal(err)
	}
	byTime, err := cert.NoiseCovariance(cert.Persons[0], []float64{0, 5, 10, 15, 25, 35})
	if err != nil {
		t.Fatal(err)
	}
	// Input order 10, 20, 40, 5, 15, 30 s is time order 1, 3, 5, 0, 2, 4.
	pos := []int{1, 3, 5, 0, 2, 4}
	for i := range pos {
		for j := range pos {
			if in.At(i, j) != byTime.At(pos[i], pos[j]) {
				t.Fatalf("input (%d,%d) = %v, time order (%d,%d) = %v", i, j, in.At(i, j), pos[i], pos[j], byTime.At(pos[i], pos[j]))
			}
		}
	}
	if _, err := cert.InputNoiseCovariance(traces[:1]); err == nil {
		t.Error("traces with fewer points than the person accepted")
	}
}

package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
)

// checkStays checks the place attack's JSON: stay_error_m is the median of
// the stays' error_m, and every stay is a stay of the rule.
func checkStays(t *testing.T, v map[string]any) []any {
	t.Helper()
	stays, ok := v["stays"].([]any)
	if !ok || len(stays) == 0 {
		t.Fatalf("stays %v", v["stays"])
	}
	rule := v["stay_rule"].(map[string]any)
	var errs []float64
	for _, s := range stays {
		m := s.(map[string]any)
		e := riskNum(t, m, "error_m")
		errs = append(errs, e)
		pts, used := riskNum(t, m, "points"), riskNum(t, m, "points_used")
		if !(e >= 0) || !(riskNum(t, m, "stated_sd_m") > 0) || !(riskNum(t, m, "plain_mean_error_m") >= 0) ||
			riskNum(t, m, "duration_s") < riskNum(t, rule, "min_duration_s") || !(used >= 2 && used <= pts) ||
			riskNum(t, m, "end_index")-riskNum(t, m, "start_index")+1 != pts || !(riskNum(t, m, "noise_rms_m") > 0) {
			t.Errorf("stay %v", m)
		}
	}
	slices.Sort(errs)
	med := errs[len(errs)/2]
	if len(errs)%2 == 0 {
		med = (errs[len(errs)/2-1] + errs[len(errs)/2]) / 2
	}
	if got := riskNum(t, v, "stay_error_m"); math.Abs(got-med) > 1e-9 {
		t.Errorf("stay_error_m %v, median of the stays' errors %v", got, med)
	}
	riskNum(t, v, "stay_plain_mean_error_m")
	return stays
}

// attack --json reports stay_error_m, the text says what it means, and
// --select-kernels adds the model-selection adversary; with --no-places
// stay_error_m is null. The wiring is checked on the bundled sample's
// first 80 fixes (6.6 minutes at home) with --stay-min 5m, one stay: the
// place attack itself is attack's (TestAttackPlaceMatchesTheory,
// TestAttackStaysRule), and the whole sample's 16-minute stay costs four
// times as much for the same lines (TestAttackStayErrorGeoLife attacks a
// real trace's stays in the full suite).
func TestAttackStayErrorCLI(t *testing.T) {
	t.Parallel()
	dir, _, prior := samplePaths(t)
	in := filepath.Join(dir, "home.plt")
	lines := strings.SplitAfter(string(sample.PLT), "\n")
	if err := os.WriteFile(in, []byte(strings.Join(lines[:6+80], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.plt")
	riskRunJSON(t, "sanitize", "--in", in, "--out", out, "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--origin", "39.9781,116.3268", "--seed", "5")
	stay := []string{"--stay-min", "5m"}
	v := runJSON(t, append([]string{"attack", "--in", out, "--truth", in, "--select-kernels", "rbf,matern32"}, stay...)...)
	if stays := checkStays(t, v); len(stays) != 1 {
		t.Errorf("%d stays in the sample, want 1", len(stays))
	}
	if got := riskNum(t, v["stay_rule"].(map[string]any), "min_duration_s"); got != 300 {
		t.Errorf("stay rule's min_duration_s %v, want --stay-min's 300", got)
	}
	sel, ok := v["persons"].([]any)[0].(map[string]any)["model_selection"].(map[string]any)
	if !ok || (sel["kernel"] != "rbf" && sel["kernel"] != "matern32") || len(sel["candidates"].([]any)) != 2 {
		t.Errorf("model_selection %v", sel)
	}
	if !(riskNum(t, v, "model_selection_rmse_m") > 0) {
		t.Errorf("model_selection_rmse_m %v", v["model_selection_rmse_m"])
	}
	t.Logf("sample: stay_error_m %.1f m (plain mean %.1f m), release RMS %.1f m per point; reconstruction %.1f m, model selection (%s) %.1f m",
		riskNum(t, v, "stay_error_m"), riskNum(t, v, "stay_plain_mean_error_m"), riskNum(t, v, "release_rmse_m"), riskNum(t, v, "rmse_m"), sel["kernel"], riskNum(t, v, "model_selection_rmse_m"))

	stdout, stderr, err := run(t, append([]string{"attack", "--in", out, "--truth", in}, stay...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "the stay's location is recovered to within") {
		t.Errorf("text output does not say what the place attack found:\n%s", stdout)
	}
	off := runJSON(t, "attack", "--in", out, "--truth", in, "--no-places")
	if e, present := off["stay_error_m"]; !present || e != nil {
		t.Errorf("--no-places: stay_error_m %v (present %v), want null", e, present)
	}
	if err := riskRunErr(t, "attack", "--in", out, "--truth", in, "--stay-min", "0s"); err == nil {
		t.Error("--stay-min 0s: no error")
	}
}

// The place attack on a real GeoLife trace with stays of 20 and 40 minutes
// (user 000, held out of the bundled prior's corpus: the last 215 of a
// 908-fix file's fixes, two stays), sanitised with the CLI: attack --json
// reports stay_error_m. The whole file's attack cost 5 CPU-s, nearly all
// of it the reconstruction, which is not this test's subject. Full suite
// only: with -short TestAttackStayErrorCLI checks the same wiring on the
// bundled sample, and attack's place tests the attack.
func TestAttackStayErrorGeoLife(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a release and attack of GeoLife stays; TestAttackStayErrorCLI checks the wiring with -short")
	}
	b, err := os.ReadFile(filepath.Join(geolifeDir, "000", "20081023025304.plt"))
	if err != nil {
		t.Skipf("GeoLife trace with stays of 15 minutes or more not found (%v)", err)
	}
	// The six header lines, then the fixes from index 693 on (the stays
	// start at fixes 693 and 850; the one before ends at 692).
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) < 6+908 {
		t.Fatalf("GeoLife 000/20081023025304.plt has %d lines, want 914", len(lines))
	}
	in := filepath.Join(t.TempDir(), "000", "20081023025304.plt")
	if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(strings.Join(append(lines[:6:6], lines[6+693:]...), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, prior := samplePaths(t)
	out := filepath.Join(t.TempDir(), "out.plt")
	riskRunJSON(t, "sanitize", "--in", in, "--out", out, "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--origin", "39.9781,116.3268", "--seed", "11")
	v := runJSON(t, "attack", "--in", out, "--truth", in)
	stays := checkStays(t, v)
	t.Logf("%s: %d stays, stay_error_m %.1f m (plain mean %.1f m), release RMS %.1f m per point",
		in, len(stays), riskNum(t, v, "stay_error_m"), riskNum(t, v, "stay_plain_mean_error_m"), riskNum(t, v, "release_rmse_m"))
}

// A corpus release is attacked as a directory and file by file, with the
// certificates found through its manifest: three GeoLife files of user
// 000 released as a corpus; the directory's attack covers every point of
// the person, one file's covers that file's points (fewer than the
// person's certified ones), --truth may stay the whole original
// directory, and the linear-time path is used. Progress goes to stderr in
// text mode and nowhere with --json; --help says directories are taken.
func TestAttackCorpusRelease(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(geolifeDir, "000", "*.plt"))
	if len(files) < 3 {
		t.Skipf("GeoLife user 000 not found under %s", geolifeDir)
	}
	slices.SortFunc(files, func(a, b string) int { return pltRows(t, a) - pltRows(t, b) })
	tmp := t.TempDir()
	corpus, out := filepath.Join(tmp, "corpus"), filepath.Join(tmp, "released")
	if err := os.MkdirAll(filepath.Join(corpus, "000"), 0o755); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files[:3] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(corpus, "000", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, prior := samplePaths(t)
	riskRunJSON(t, "sanitize", "--in", corpus, "--corpus", "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "3")
	whole := runJSON(t, "attack", "--in", out, "--truth", corpus, "--no-places")
	p := whole["persons"].([]any)[0].(map[string]any)
	total = int(riskNum(t, p, "certified_points"))
	if int(riskNum(t, p, "points")) != total || p["uid"] != "000" || len(whole["persons"].([]any)) != 1 {
		t.Errorf("whole release: person %v", p)
	}
	if path := p["adversary"].(map[string]any)["east"].(map[string]any)["path"]; path != "state space" {
		t.Errorf("path %v, want the linear-time path", path)
	}
	one := filepath.Join(out, "000", filepath.Base(files[2]))
	for _, truth := range []string{corpus, filepath.Join(corpus, "000", filepath.Base(files[2]))} {
		v := runJSON(t, "attack", "--in", one, "--truth", truth, "--no-places")
		q := v["persons"].([]any)[0].(map[string]any)
		if n := int(riskNum(t, q, "points")); n != pltRows(t, files[2]) || int(riskNum(t, q, "certified_points")) != total || n >= total {
			t.Errorf("one file (truth %s): %d points of %d certified, the file has %d rows", truth, n, int(riskNum(t, q, "certified_points")), pltRows(t, files[2]))
		}
		if !(riskNum(t, v, "rmse_m") > 0) {
			t.Errorf("one file: rmse_m %v", v["rmse_m"])
		}
	}
	stdout, stderr, err := run(t, "attack", "--in", one, "--truth", corpus, "--no-places")
	if err != nil || !strings.Contains(stdout, "certified points") || !strings.Contains(stderr, "attack: ") {
		t.Errorf("text mode: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	if _, stderr, _ := run(t, "attack", "--in", one, "--truth", corpus, "--no-places", "--json"); strings.Contains(stderr, "attack: ") {
		t.Errorf("--json: progress on stderr:\n%s", stderr)
	}
	help, _, _ := run(t, "attack", "--help")
	if !strings.Contains(help, "directory") || !strings.Contains(help, "manifest.json") {
		t.Errorf("attack --help does not say that directories are taken:\n%s", help)
	}
	// Without the manifest the certificate cannot be found: the error says
	// what to give.
	if err := os.Remove(filepath.Join(out, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "attack", "--in", one, "--truth", corpus); err == nil || !strings.Contains(err.Error(), "--certificate") {
		t.Errorf("no manifest: error %v, want one naming --certificate", err)
	}
}

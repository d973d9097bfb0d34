package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/sanitize"
)

// geolifeDir is the GeoLife excerpt beside the repository (users 000-007).
var geolifeDir = filepath.Join("..", "..", "..", "shared", "data", "geolife")

// geolife returns the user directories and every file of the corpus,
// skipping the test when the data is absent.
func geolife(t *testing.T) (users, files []string) {
	t.Helper()
	users, _ = filepath.Glob(filepath.Join(geolifeDir, "[0-9][0-9][0-9]"))
	files, _ = filepath.Glob(filepath.Join(geolifeDir, "*", "*.plt"))
	if len(users) == 0 || len(files) == 0 {
		t.Skipf("GeoLife data not found at %s", geolifeDir)
	}
	return users, files
}

// pltRows counts the data rows of PLT files (lines after the six header
// lines that are not blank), independently of the readers.
func pltRows(t *testing.T, paths ...string) int {
	t.Helper()
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if i >= 6 && strings.TrimSpace(l) != "" {
				n++
			}
		}
	}
	return n
}

// runJSON runs a command with --json, fails the test unless it succeeds,
// and returns its output with the skipped-rows report checked: an integer
// skipped_rows equal to the sum of skipped_by_reason.
func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	stdout, stderr, err := run(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("%v: --json output does not parse: %v", args, err)
	}
	n, ok := v["skipped_rows"].(float64)
	by, ok2 := v["skipped_by_reason"].(map[string]any)
	if !ok || !ok2 || n != float64(int(n)) {
		t.Fatalf("%v: no skipped-rows report (skipped_rows %v, skipped_by_reason %v)", args, v["skipped_rows"], v["skipped_by_reason"])
	}
	sum := 0.0
	for _, c := range by {
		sum += c.(float64)
	}
	if sum != n {
		t.Errorf("%v: skipped_by_reason %v does not add up to skipped_rows %v", args, by, n)
	}
	return v
}

// readAccounted checks that the points read and the rows skipped or merged
// account for every data row of the files.
func readAccounted(t *testing.T, v map[string]any, what string, files ...string) {
	t.Helper()
	rep := v["report"].(map[string]any)
	if got, want := int(rep["read"].(float64)+v["skipped_rows"].(float64)), pltRows(t, files...); got != want {
		t.Errorf("%s: %v points read + %v rows skipped or merged = %d, but the files have %d rows", what, rep["read"], v["skipped_rows"], got, want)
	}
}

// TestGeoLifeCorpus runs the README's commands with default flags over the
// GeoLife excerpt: convert, inspect and geoind sanitize on every file, the
// same, plot and repro predictive on every user directory (each costs a
// fraction of a second, and reads every file's quirks), and on a copy of
// at most two files of every user (geolifeSubset: the smallest file and
// one of 700 rows or more) as one nested directory. sanitize, attack and
// fit (one window) run on that copy, as user directories and a corpus of
// all eight people, and the short files as files: the wiring, and every
// person; the releases' properties on real data at full size are the
// library's (sanitize's TestGeoLifeHeldOut and TestPlacesEveryLength,
// attack's TestGeoLifeNeverWorseThanRelease, prior's GeoLife fits). Each
// command must succeed and report what it skipped. With -short a copy of
// two files of two users (geolifeSubset) stands in for the excerpt in
// every command, and one release is attacked.
func TestGeoLifeCorpus(t *testing.T) {
	t.Parallel()
	users, files := geolife(t)
	// sub: a copy of at most two files of every user (of two with -short),
	// the nested directory the commands read as a whole and the corpus
	// sanitize releases.
	n := len(users)
	if testing.Short() {
		n = 2
	}
	sub, subUsers, subFiles := geolifeSubset(t, n)
	if testing.Short() {
		users, files = subUsers, subFiles
	}
	tmp := t.TempDir()
	// Its own ledger: other tests run beside this one (t.Parallel).
	ledger := filepath.Join(tmp, "ledger.json")
	const origin = "39.9042,116.4074" // central Beijing, public
	// geoind sanitize refuses to release part of a person's points unless
	// told it may; with the default budget it covers the first few dozen.
	geoindArgs := func(in, out string) []string {
		return []string{"geoind", "sanitize", "--in", in, "--out", out, "--origin", origin, "--rate", "0.033", "--allow-partial", "--force", "--ledger", ledger}
	}
	for _, f := range files {
		v := runJSON(t, "inspect", f)
		readAccounted(t, v, f, f)
		if tr := v["traces"].([]any); len(tr) != 1 || !tr[0].(map[string]any)["valid"].(bool) {
			t.Errorf("inspect %s: %d traces, want one well-formed", f, len(tr))
		}
		v = runJSON(t, "convert", "--in", f, "--out", filepath.Join(tmp, "one.csv"), "--force")
		readAccounted(t, v, f, f)
		// plot reads every file in its user's directory below; a file's
		// plot only drew the same points again.
		runJSON(t, geoindArgs(f, filepath.Join(tmp, "one.gpx"))...)
	}
	for _, u := range append(users, sub) {
		ufiles, _ := filepath.Glob(filepath.Join(u, "*.plt"))
		if u == sub {
			ufiles = subFiles
		}
		v := runJSON(t, "inspect", u)
		readAccounted(t, v, u, ufiles...)
		if n := len(v["traces"].([]any)); n != len(ufiles) {
			t.Errorf("inspect %s: %d traces for %d files", u, n, len(ufiles))
		}
		v = runJSON(t, "convert", "--in", u, "--out", filepath.Join(tmp, "user.geojson"), "--force")
		readAccounted(t, v, u, ufiles...)
		runJSON(t, "plot", u, "--out", filepath.Join(tmp, "user.svg"), "--force")
		v = runJSON(t, geoindArgs(u, filepath.Join(tmp, "user.csv"))...)
		if !v["written"].(bool) {
			t.Errorf("geoind sanitize %s wrote nothing", u)
		}
		runJSON(t, "repro", "predictive", "--data", u, "--samplings", "2", "--seed", "1")
	}
	root, users, files := sub, subUsers, subFiles
	// sanitize every file with the bundled prior (default flags beyond the
	// required ones), every user directory and the whole corpus as a
	// corpus; attack the smallest files' releases.
	// The bundled prior, with its private corpus index built from the
	// GeoLife users it was fitted on (001-007): their files need
	// --allow-prior-overlap, and their certificates cover no class.
	prior := bundledPriorWithIndex(t)
	san := func(in, out string, more ...string) map[string]any {
		v := runJSON(t, append([]string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--force", "--allow-prior-overlap", "--ledger", ledger}, more...)...)
		held := strings.Contains(filepath.ToSlash(in), "/000")
		if cov, ok := v["prior_coverage"].(string); ok { // a file's certificate (a directory prints its manifest)
			route := v["secret_classes"].(map[string]any)["route"].(map[string]any)["covered"].(bool)
			if held != (cov == sanitize.PriorIndependent) || held != route {
				t.Errorf("sanitize %s: prior coverage %q, route covered %v", in, cov, route)
			}
		}
		return v
	}
	type release struct {
		in, out string
		rows    int
	}
	var rels []release
	for i, f := range files {
		if pltRows(t, f) >= 700 {
			// Released in its user's directory and the corpus below: the
			// file releases are the short files' (every user, both prior
			// coverages), the long ones cost most of the test.
			continue
		}
		out := filepath.Join(tmp, fmt.Sprintf("s%d.plt", i))
		v := san(f, out)
		if e := v["epsilon_max"].(float64); e > 1 {
			t.Errorf("sanitize %s: epsilon %v", f, e)
		}
		rels = append(rels, release{f, out, pltRows(t, f)})
	}
	slices.SortFunc(rels, func(a, b release) int { return a.rows - b.rows })
	// The attack must beat the release it starts from. One release of a
	// 15-point file is too noisy a sample (a small noise draw can leave the
	// release closer than the prior-shrunk reconstruction), so compare
	// the mean squared errors over seeded releases. With -short one
	// release of the smallest file checks the wiring: that the adversary
	// is never worse than the release is attack's (TestGuardAgainstMisfitPrior
	// in -short, TestGeoLifeNeverWorseThanRelease on GeoLife in full).
	attacked, seeds := rels[:2], 5
	if testing.Short() {
		attacked, seeds = rels[:1], 1
	}
	for _, r := range attacked {
		var rec2, rel2 float64
		for seed := 1; seed <= seeds; seed++ {
			out := filepath.Join(tmp, fmt.Sprintf("attack-%d.plt", seed))
			runJSON(t, "sanitize", "--in", r.in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--force", "--seed", fmt.Sprint(seed), "--allow-prior-overlap")
			v := runJSON(t, "attack", "--in", out, "--truth", r.in)
			rec, rel := v["rmse_m"].(float64), v["release_rmse_m"].(float64)
			if !(rec > 0 && rel > 0) {
				t.Fatalf("attack %s: reconstruction %v m, release %v m", r.in, rec, rel)
			}
			rec2, rel2 = rec2+rec*rec, rel2+rel*rel
		}
		if rec, rel := math.Sqrt(rec2/float64(seeds)), math.Sqrt(rel2/float64(seeds)); seeds > 1 && rec > rel {
			t.Errorf("attack %s: reconstruction RMSE %.1f m over %d releases, above the releases' own %.1f m", r.in, rec, seeds, rel)
		}
	}
	for _, u := range append(users, root) {
		out := filepath.Join(tmp, "corpus-"+filepath.Base(u))
		var more []string
		if u == root {
			more = []string{"--corpus"}
		}
		v := san(u, out, more...)
		if n, want := len(v["persons"].([]any)), len(users); u == root && n != want || u != root && n != 1 {
			t.Errorf("sanitize --in %s: %d people", u, n)
		}
	}
	// fit costs a few seconds per user's windows: two users' directories,
	// one window each; with -short one, with two kernels (a tenth of the
	// CPU: the wiring is the same, TestFitCommandCompare runs the default
	// fit, and prior's tests check the fit itself).
	fitUsers, fitSmall := []string{users[0], users[len(users)/2]}, []string{"--max-windows", "1"}
	if testing.Short() {
		fitUsers, fitSmall = fitUsers[:1], []string{"--kernels", "rbf,matern32", "--max-windows", "1"}
	}
	for _, u := range fitUsers {
		v := runJSON(t, append([]string{"fit", "--in", u, "--out", filepath.Join(tmp, "prior.json"), "--force"}, fitSmall...)...)
		if v["windows"].(float64) < 1 {
			t.Errorf("fit %s: no windows", u)
		}
	}
}

// TestGeoLifeDirty runs the commands over a copy of a GeoLife user with the
// faults of real data written into it (exact repeats, repeated and
// backward times, bad coordinates, a malformed row, a file cut mid-row, a
// file that is not a PLT file), and checks that each command succeeds and
// counts every fault by reason, on stderr and in --json.
func TestGeoLifeDirty(t *testing.T) {
	t.Parallel()
	users, _ := geolife(t)
	src, _ := filepath.Glob(filepath.Join(users[0], "*.plt"))
	if testing.Short() && len(src) > 3 {
		src = src[:3] // the three files the faults go into; the rest only cost time
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(users[0]))
	os.MkdirAll(dir, 0o755)
	lines := func(p string) []string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(strings.TrimSuffix(string(b), "\r\n"), "\r\n")
	}
	var copies []string
	for i, p := range src {
		ls := lines(p)
		if len(ls) < 20 {
			continue
		}
		switch i {
		case 0: // an exact repeat, a repeated time elsewhere, a time going back
			row := strings.Split(ls[10], ",")
			row[0] = "40.1"
			ls = append(ls[:11], append([]string{ls[10], strings.Join(row, ","), ls[8]}, ls[11:]...)...)
		case 1: // NaN and out-of-range coordinates, and a malformed altitude
			for k, bad := range map[int]string{8: "NaN", 9: "91.5"} {
				row := strings.Split(ls[k], ",")
				row[0] = bad
				ls[k] = strings.Join(row, ",")
			}
			row := strings.Split(ls[11], ",")
			row[3] = "4x2"
			ls[11] = strings.Join(row, ",")
		case 2: // cut in the middle of its last row
			last := ls[len(ls)-1]
			ls[len(ls)-1] = last[:len(last)/2]
		}
		body := strings.Join(ls, "")
		if i != 2 {
			body += "\r\n"
		}
		out := filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(out, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, out)
	}
	if len(copies) < 3 {
		t.Skip("the first user has too few long files")
	}
	os.WriteFile(filepath.Join(dir, "broken.plt"), []byte("Geolife trajectory\r\nWGS 84\r\n"), 0o644)
	want := map[string]float64{"duplicate_fix": 1, "repeated_time": 1, "time_backwards": 1, "bad_coordinate": 2, "malformed_row": 1, "truncated_row": 1}
	tmp := t.TempDir()
	for _, args := range [][]string{
		{"inspect", dir},
		{"convert", "--in", dir, "--out", filepath.Join(tmp, "x.csv"), "--force"},
		{"plot", dir, "--out", filepath.Join(tmp, "x.svg"), "--force"},
		// What is read is counted before fitting: two kernels on one
		// window count the same faults as the default fit, at a fraction
		// of its cost (TestFitCommandCompare runs the default).
		{"fit", "--in", dir, "--out", filepath.Join(tmp, "p.json"), "--force", "--kernels", "rbf,matern32", "--max-windows", "1"},
		{"geoind", "sanitize", "--in", dir, "--out", filepath.Join(tmp, "g.csv"), "--origin", "39.9042,116.4074", "--rate", "0.033", "--allow-partial", "--force", "--ledger", filepath.Join(tmp, "ledger.json")},
		{"repro", "predictive", "--data", dir, "--samplings", "1"},
	} {
		v := runJSON(t, args...)
		by := v["skipped_by_reason"].(map[string]any)
		if fmt.Sprint(by) != fmt.Sprint(toAny(want)) || v["skipped_rows"].(float64) != 7 {
			t.Errorf("%v: skipped %v by reason %v, want 7: %v", args[0], v["skipped_rows"], by, want)
		}
		sf, _ := v["skipped_files"].([]any)
		if len(sf) != 1 || !strings.Contains(fmt.Sprint(sf[0]), "broken.plt") {
			t.Errorf("%v: skipped files %v", args[0], sf)
		}
		// The text run reports the same on stderr.
		_, stderr, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, s := range []string{"7 of", "1 duplicate_fix", "2 bad_coordinate", "1 truncated_row", "broken.plt", "1 of " + fmt.Sprint(len(copies)+1) + " files could not be read"} {
			if !strings.Contains(stderr, s) {
				t.Errorf("%v: stderr lacks %q:\n%s", args[0], s, stderr)
			}
		}
	}
	// Strictly, the first fault stops the run and says how to go on.
	_, _, err := run(t, "inspect", dir, "--strict")
	if err == nil || !strings.Contains(err.Error(), "--strict stops at the first bad row") {
		t.Errorf("strict: %v", err)
	}
}

func toAny(m map[string]float64) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

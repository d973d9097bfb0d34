package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
)

// fitCorpus writes the bundled sample trace and a file that is not a trace
// into a directory tree.
func fitCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sub := filepath.Join(dir, "000")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, sample.Name), sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFitCommand(t *testing.T) {
	dir := fitCorpus(t)
	out := filepath.Join(t.TempDir(), "prior.json")
	plot := filepath.Join(t.TempDir(), "leff.svg")
	stdout, _, err := run(t, "fit", "--in", dir, "--kernel", "matern52", "--family", "0.2,0.8", "--out", out, "--plot", plot, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res prior.FitSummary
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
	}
	p, err := prior.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Family(); p.Kernel != "matern52" || p.Version != prior.Version || len(p.FamilySet.Kernels) != 1 || p.Fit == nil || *p.Fit.FamilyQuantiles != [2]float64{0.2, 0.8} || p.Fit.Windows != res.Windows || res.Windows == 0 ||
		!(f.LengthscaleMin > 0 && f.LengthscaleMin <= f.LengthscaleMax && f.LengthscaleMax <= 40) || p.Origin == nil || p.Fit.Fingerprints != nil || !p.Fit.CorpusIndexed {
		t.Errorf("prior %+v, fit %+v, %d windows in the output", p, p.Fit, res.Windows)
	}
	if res.Files != 1 || len(res.Ignored) != 1 || res.Traces != 1 || res.Points != samplePoints(t) {
		t.Errorf("files %d, ignored %v, traces %d, points %d", res.Files, res.Ignored, res.Traces, res.Points)
	}
	if res.PointsFitted+res.PointsThinned+res.PointsSkipped != res.Points {
		t.Errorf("points not accounted for: %+v", res)
	}
	if !reflect.DeepEqual(res.Prior, p) {
		t.Errorf("--json prior %+v differs from the file's %+v", res.Prior, p)
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("plot %s: %v", plot, err)
	}

	// The text summary names windows, skips, quartiles and the prior.
	stdout, _, err = run(t, "fit", "--in", filepath.Join(dir, "000", sample.Name), "--kernel", "rbf", "--out", out, "--force")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"windows:", "l_eff quartiles", "paper, GeoLife", "prior family: rbf, lengthscale", "public origin:", "wrote " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// TestFitCommandCompare: by default fit compares kernels on long windows
// (the sample trace is one 23-minute window; its trace and person
// fingerprints are recorded), reports each kernel in
// --json and the text, draws the lengthscale distributions, and writes a
// version 3 prior whose family reaches the window's duration.
func TestFitCommandCompare(t *testing.T) {
	t.Parallel()
	dir := fitCorpus(t)
	out := filepath.Join(t.TempDir(), "prior.json")
	plot := filepath.Join(t.TempDir(), "ls.svg")
	stdout, _, err := run(t, "fit", "--in", dir, "--out", out, "--plot", plot, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res prior.FitSummary
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
	}
	p, err := prior.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Comparison
	if c == nil || len(c.Kernels) != len(prior.CompareKernels) || res.Windows != 1 || c.LongestWindowS < 20*60 {
		t.Fatalf("comparison %+v, %d windows", c, res.Windows)
	}
	won := 0
	for _, k := range c.Kernels {
		won += k.Won
		if k.Fits != 2 || k.MedianGainOverRBF == nil || !(k.LengthscalePercentilesS[0] > 0 && k.LengthscalePercentilesS[0] <= k.LengthscalePercentilesS[4]) {
			t.Errorf("kernel summary %+v", k)
		}
		// A sum reports its short and long parts (l1 < l2 in each fit, so in
		// the medians).
		if _, _, isSum := prior.SumParts(k.Kernel); isSum != (len(k.Parts) == 2) {
			t.Errorf("%s: parts %+v", k.Kernel, k.Parts)
		} else if isSum && !(k.Parts[0].Role == "short" && k.Parts[1].Role == "long" && k.Parts[0].LengthscalePercentilesS[2] < k.Parts[1].LengthscalePercentilesS[2]) {
			t.Errorf("%s: parts %+v not short then long", k.Kernel, k.Parts)
		}
	}
	if won != 1 || p.Version != prior.Version || p.Kernel != c.Nominal || p.Fit.Fingerprints != nil || !p.Fit.CorpusIndexed || *p.Fit.FamilyQuantiles != [2]float64{0.05, 0.95} {
		t.Errorf("won %d, prior %+v, fit %+v", won, p, p.Fit)
	}
	// The family of each winning candidate's kernel (a sum's long part)
	// reaches the longest window.
	for _, k := range c.Kernels {
		if k.WinShare < c.MinWinShare {
			continue
		}
		kernel := k.Kernel
		if _, long, ok := prior.SumParts(k.Kernel); ok {
			kernel = long
		}
		for _, f := range p.Families().Kernels {
			if f.Kernel == kernel && f.LengthscaleMax < c.LongestWindowS {
				t.Errorf("family %v stops short of the longest window %v s", f, c.LongestWindowS)
			}
		}
	}
	if !reflect.DeepEqual(res.Prior, p) {
		t.Errorf("--json prior %+v differs from the file's %+v", res.Prior, p)
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("plot %s: %v", plot, err)
	}
	// The text of a comparison with a sum; 100 points of the window are
	// enough for every line.
	stdout, _, err = run(t, "fit", "--in", dir, "--kernels", "rbf,matern32,matern32+matern32", "--max-points", "100", "--out", out, "--force")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gain vs rbf", "matern32", "matern32+matern32", "  short matern32", "  long matern32", "prior family:", "private corpus index: ", "held-out coverage: not measured", "wrote " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// TestFitCommandGeoLife fits two real GeoLife files when the shared data
// is present: the default comparison on two of their three windows, each
// thinned to 100 points (a fifth of the CPU of all of them: what is
// checked is the wiring of real input, prior's tests check the fit).
func TestFitCommandGeoLife(t *testing.T) {
	t.Parallel()
	files := []string{
		"../../../shared/data/geolife/001/20081027233029.plt",
		"../../../shared/data/geolife/004/20081024092739.plt",
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("GeoLife data not found: %v", err)
		}
	}
	out := filepath.Join(t.TempDir(), "prior.json")
	stdout, _, err := run(t, "fit", "--in", files[0], "--in", files[1], "--max-windows", "2", "--max-points", "100", "--out", out, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res prior.FitSummary
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	p, err := prior.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The comparison's family is not capped at the paper's 40 s.
	_, hi := p.Families().LengthscaleRange()
	if res.Files != 2 || res.Windows < 2 || p.Fit.SamplingPeriod <= 0 || res.Comparison == nil || hi < res.Comparison.LongestWindowS || hi <= 40 {
		t.Errorf("files %d, windows %d, prior %+v", res.Files, res.Windows, p)
	}
	// Two persons: the held-out coverage is measured (two folds), in
	// --json and in the prior's family, and the family starts at the
	// fixes' spacing.
	c := res.HeldOutCoverage
	if c == nil || c.Persons != 2 || c.Windows != res.Windows || c.Covered+len(c.Uncovered) != c.Windows ||
		p.FamilySet.HeldOutCoverage == nil || *p.FamilySet.HeldOutCoverage != c.Share {
		t.Errorf("held-out coverage %+v, prior's %v", c, p.FamilySet.HeldOutCoverage)
	}
	if lo, _ := p.Families().LengthscaleRange(); lo != 20 {
		t.Errorf("family starts at %v s, want the fixes' spacing 20 s", lo)
	}
}

func TestFitCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.plt")
	plt := strings.Replace(string(sample.PLT), "39.9", "39.x9", 1) // the first fix, line 7
	if err := os.WriteFile(bad, []byte(plt), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.csv")
	if err := os.WriteFile(short, []byte("time,lat,lon\n2008-10-24T02:00:00Z,39.98,116.32\n2008-10-24T02:00:05Z,39.98,116.33\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prior.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--out", out}, "--in and --out are required"},
		{[]string{"fit", "--in", bad, "--out", out, "--strict"}, `bad.plt:7: field "lat"`},
		{[]string{"fit", "--in", filepath.Join(dir, "missing"), "--out", out}, "missing"},
		{[]string{"fit", "--in", short, "--out", out}, "no window could be fitted"},
		{[]string{"fit", "--in", short, "--out", out, "--family", "0.5,1"}, "--family [0.5 1]"},
		{[]string{"fit", "--in", short, "--out", out, "--family", "0"}, "--family [0]"},
		{[]string{"fit", "--in", short, "--out", out, "--family", "0.8,0.2"}, "LO <= HI"},
		{[]string{"fit", "--in", short, "--out", out, "--max-points", "0"}, "--max-points 0"},
		{[]string{"fit", "--in", short, "--out", out, "--min-points", "2"}, "fit: --min-points: min-points = 2: must be at least 3"},
		{[]string{"fit", "--in", short, "--out", out, "--min-duration", "400s", "--max-duration", "300s"}, "--min-duration: min-duration = 6m40s (max-duration = 5m0s)"},
		{[]string{"fit", "--in", short, "--out", out, "--kernel", "rbf", "--min-duration", "400s"}, "--min-duration: min-duration = 6m40s"},
		{[]string{"fit", "--in", short, "--out", out, "--kernel", "rbf", "--kernels", "rbf"}, "not both"},
		{[]string{"fit", "--in", short, "--out", out, "--kernels", "rbf,laplace"}, `"laplace"`},
		{[]string{"fit", "--in", short, "--out", out, "--kernels", "rbf,matern32+laplace"}, `"laplace"`},
		{[]string{"fit", "--in", short, "--out", out, "--kernels", "rbf,matern32+periodic"}, "periodic"},
		{[]string{"fit", "--in", short, "--out", out, "--kernels", "rbf+rbf+rbf"}, "two parts"},
		{[]string{"fit", "--in", short, "--out", out, "--max-windows", "0"}, "--max-windows 0"},
		{[]string{"fit", "--in", short, "--out", out, "--kernel", "periodic"}, "periodic"},
		{[]string{"fit", "--in", short, "--out", out, "--plot", "x.gif"}, "--plot x.gif"},
		{[]string{"fit", "--in", t.TempDir(), "--out", out}, "no trace files"},
	} {
		_, _, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args[1:], err, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed fit left %s behind", out)
	}
	// By default the bad row is skipped and reported (while reading: one
	// small window fits at a fraction of the default comparison's cost).
	stdout, stderr, err := run(t, "fit", "--in", bad, "--out", out, "--json", "--kernels", "rbf,matern32", "--max-windows", "1", "--max-points", "100")
	if err != nil {
		t.Fatal(err)
	}
	var res prior.FitSummary
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.SkippedRows != 1 || res.SkippedRecords != 1 || res.Points != len(strings.Split(plt, "\n"))-8 || !strings.Contains(stderr, "bad.plt:7") {
		t.Errorf("lenient fit: skipped %d, %d points; stderr %s", res.SkippedRows, res.Points, stderr)
	}
}

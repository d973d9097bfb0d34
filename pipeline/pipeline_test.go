package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	psample "github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// geolife returns the GeoLife excerpt, ../shared/data/geolife from the
// repository's root, found by walking up; the test is skipped without it,
// as the root module's GeoLife tests are.
func geolife(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		p := filepath.Join(dir, "shared", "data", "geolife")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		dir = filepath.Dir(dir)
	}
	t.Skip("GeoLife data not found (../shared/data/geolife from the repository root)")
	return ""
}

// copyGeoLife copies GeoLife files (paths relative to its root, or
// patterns) to a new temporary directory, which it returns.
func copyGeoLife(t *testing.T, files ...string) string {
	t.Helper()
	root := geolife(t)
	in := t.TempDir()
	for _, pattern := range files {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(matches) == 0 {
			t.Fatalf("%s: %v (%d files)", pattern, err, len(matches))
		}
		for _, f := range matches {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			if err := os.MkdirAll(filepath.Join(in, filepath.Dir(rel)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, rel), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return in
}

// testOptions are the release options of the comparisons.
func testOptions(in, out string, seed uint64) SanitizeOptions {
	return SanitizeOptions{Input: in, Output: out, SanitizeParams: testParams(seed), Reading: Reading{AsCorpus: true}}
}

// testParams are the release parameters of the comparisons.
func testParams(seed uint64) SanitizeParams {
	// The bundled prior was fitted on users 001-007: allowed, and said.
	return SanitizeParams{Prior: sample.Prior, Epsilon: 1, Lambda: 2, Radius: 100, Seeded: true, Seed: seed, AllowPriorOverlap: true}
}

// singleMachine releases the corpus under root with sanitize.Corpus and
// the same options as the CLI's `sanitize --in DIR --out DIR --seed N`.
func singleMachine(t testing.TB, root, out string, seed uint64) *sanitize.Manifest {
	t.Helper()
	return singleMachineLedger(t, root, out, seed, "")
}

// singleMachineLedger is singleMachine with the certificates' ledger field
// (the CLI's seeded run says budget.Seeded).
func singleMachineLedger(t testing.TB, root, out string, seed uint64, ledger string) *sanitize.Manifest {
	t.Helper()
	p, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	m, err := sanitize.Corpus(sanitize.CorpusOptions{In: root, Out: out,
		Release: sanitize.Options{Prior: p, Epsilon: 1, Lambda: 2, Radius: 100, Delta: sanitize.DefaultDelta,
			Design: sanitize.DesignAuto, Path: sanitize.PathAuto, Source: noise.Seeded(seed), AllowPriorOverlap: true, Ledger: ledger}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// timing matches the top-level "seconds" line of a certificate or
// manifest: the one field two identical releases differ in.
var timing = regexp.MustCompile(`(?m)^  "seconds": [^\n]*\n`)

// sameRelease checks that two release directories hold the same files with
// the same bytes, certificates and manifests apart from their timing, and
// returns the number of trace files compared.
func sameRelease(t *testing.T, want, got string) int {
	t.Helper()
	traces := 0
	seen := map[string]bool{}
	err := filepath.WalkDir(want, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		if rel == corpus.JournalName {
			return nil // the single machine's resume journal
		}
		seen[rel] = true
		a, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil {
			t.Errorf("%s: missing from the pipeline's release: %v", rel, err)
			return nil
		}
		if rel == sanitize.ManifestName || strings.HasPrefix(rel, sanitize.CertificatesDir+string(filepath.Separator)) {
			if len(timing.FindAll(a, -1)) != 1 {
				t.Fatalf("%s: no timing line to ignore", rel)
			}
			a, b = timing.ReplaceAll(a, nil), timing.ReplaceAll(b, nil)
		} else {
			traces++
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the pipeline's release differs from the single machine's", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(got, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, _ := filepath.Rel(got, path); !seen[rel] {
				t.Errorf("%s: in the pipeline's release only", rel)
			}
		}
		return nil
	})
	return traces
}

// shared holds what several tests reuse; TestMain removes it.
var shared struct {
	dir string
	// single is the single-machine release of GeoLife with seed 11.
	single     sync.Once
	singleM    *sanitize.Manifest
	singleDir  string
	binary     sync.Once
	binaryPath string
	binaryErr  error
}

func TestMain(m *testing.M) {
	// Beam's initialisation, which a program's main makes: it also points
	// slog's default logger at stderr (TestRunLeavesLoggingAlone).
	beam.Init()
	dir, err := os.MkdirTemp("", "tracepriv-pipeline-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// singleGeoLife returns the single-machine release of GeoLife with seed
// 11, made once, and its manifest.
func singleGeoLife(t *testing.T) (string, *sanitize.Manifest) {
	root := geolife(t)
	shared.single.Do(func() {
		shared.singleDir = filepath.Join(shared.dir, "single-geolife")
		shared.singleM = singleMachine(t, root, shared.singleDir, 11)
	})
	if shared.singleM == nil {
		t.Fatal("the single-machine release failed")
	}
	return shared.singleDir, shared.singleM
}

// TestSanitizeGeoLife: a seeded release of the GeoLife excerpt on Prism is
// the single-machine release byte for byte (every trace file; certificates
// and manifest but for their timing), whether the units travel in one
// element split by the runner or one element each.
func TestSanitizeGeoLife(t *testing.T) {
	root := geolife(t)
	want, m := singleGeoLife(t)
	if len(m.Persons) != 8 || len(m.Failed) != 0 {
		t.Fatalf("single machine: %d people, failed %v", len(m.Persons), m.Failed)
	}
	for _, batch := range []int{DefaultBatchUnits, 1} {
		out := filepath.Join(t.TempDir(), "pipeline")
		o := testOptions(filepath.Join(root, "**", "*.plt"), out, 11)
		o.BatchUnits = batch
		res, err := Sanitize(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if n := sameRelease(t, want, out); n != m.Files {
			t.Errorf("compared %d trace files, want %d", n, m.Files)
		}
		t.Logf("batch of %d units: the release ran in %d bundles", batch, res.Bundles)
	}
}

// TestSanitizeDirty: files that cannot be read are listed in the
// manifest's failures, with the single machine's errors, and the rest of
// the corpus is released as the single machine releases it.
func TestSanitizeDirty(t *testing.T) {
	in := copyGeoLife(t, "000/20081023025304.plt", "000/20081024020959.plt", "004/20081024015454.plt")
	// Broken JSON that looks like GeoJSON, and a dangling link.
	os.MkdirAll(filepath.Join(in, "bad"), 0o755)
	if err := os.WriteFile(filepath.Join(in, "bad", "cut.geojson"), []byte(`{"type": "Feature", "geometry": {"type": "LineStr`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(in, "nowhere.plt"), filepath.Join(in, "bad", "gone.plt")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(in, "notes.txt"), []byte("not a trace\n"), 0o644)

	want := filepath.Join(t.TempDir(), "single")
	sm := singleMachine(t, in, want, 5)
	out := filepath.Join(t.TempDir(), "pipeline")
	res, err := Sanitize(context.Background(), testOptions(in, out, 5))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if len(m.Failed) != 2 || len(m.Persons) != 2 || m.Files != 5 || len(m.Ignored) != 1 {
		t.Fatalf("manifest: %d failed %v, %d people, %d files, ignored %v", len(m.Failed), m.Failed, len(m.Persons), m.Files, m.Ignored)
	}
	for i, want := range []string{"bad/cut.geojson", "bad/gone.plt"} {
		if f := m.Failed[i]; len(f.Files) != 1 || f.Files[0] != want || f.Error == "" {
			t.Errorf("failure %d: %+v, want %s with its error", i, f, want)
		}
	}
	if n := sameRelease(t, want, out); n != 3 || len(sm.Failed) != 2 {
		t.Errorf("compared %d trace files, want 3; the single machine failed %d files", n, len(sm.Failed))
	}
}

// TestSanitizeRefuses: options the single machine refuses, and an output
// directory inside the input or holding a release, are refused before
// anything runs. Every output is under a temporary directory, so that a
// regression writes nothing beside the shared data.
func TestSanitizeRefuses(t *testing.T) {
	root := geolife(t)
	in := t.TempDir()
	b, err := os.ReadFile(filepath.Join(root, "000", "20081024020959.plt"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(in, "000"), 0o755)
	if err := os.WriteFile(filepath.Join(in, "000", "a.plt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(in, "**", "*.plt")
	bad := testOptions(glob, t.TempDir(), 1)
	bad.Epsilon = 0
	if _, err := Sanitize(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "epsilon") {
		t.Errorf("epsilon 0: %v", err)
	}
	inside := testOptions(glob, filepath.Join(in, "000", "out"), 1)
	if _, err := Sanitize(context.Background(), inside); err == nil || !strings.Contains(err.Error(), "inside the input") {
		t.Errorf("output inside the input: %v", err)
	}
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, sanitize.ManifestName), []byte("{}"), 0o644)
	if _, err := Sanitize(context.Background(), testOptions(glob, out, 1)); err == nil || !strings.Contains(err.Error(), "holds a release") {
		t.Errorf("output holding a release: %v", err)
	}
	if _, err := Sanitize(context.Background(), testOptions(filepath.Join(in, "**", "*.nope"), t.TempDir(), 1)); err == nil || !strings.Contains(err.Error(), "no trace files") {
		t.Errorf("nothing matched: %v", err)
	}
	// With the bundled prior's private index, a file of user 004 (fitted)
	// with its first fix dropped, in another person's folder, is refused
	// and not released.
	idx, err := psample.PriorCorpus(root)
	if err != nil {
		t.Fatal(err)
	}
	var ib bytes.Buffer
	if err := idx.Write(&ib); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(root, "004", "20081024092739.plt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	self := t.TempDir()
	os.MkdirAll(filepath.Join(self, "someone"), 0o755)
	if err := os.WriteFile(filepath.Join(self, "someone", "b.plt"), []byte(strings.Join(append(lines[:6:6], lines[7:]...), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(filepath.Join(self, "**", "*.plt"), t.TempDir(), 1)
	o.AllowPriorOverlap, o.PriorCorpus = false, ib.Bytes()
	res, err := Sanitize(context.Background(), o)
	if err == nil && (res.Manifest == nil || len(res.Manifest.Failed) == 0 || !strings.Contains(fmt.Sprint(res.Manifest.Failed), "fitted on data of the input")) {
		t.Errorf("a fitted person's file, cut and moved: released (%+v)", res.Manifest)
	} else if err != nil && !strings.Contains(err.Error(), "fitted on data of the input") {
		t.Errorf("a fitted person's file, cut and moved: %v", err)
	}
}

// TestFitGeoLife: the pipeline's prior over two GeoLife users is the prior
// prior.Fit fits over the same files, byte for byte, with the same report;
// a file that cannot be read is skipped and counted, as the single-machine
// command skips it.
func TestFitGeoLife(t *testing.T) {
	in := copyGeoLife(t, "000/*.plt", "004/*.plt")
	if err := os.WriteFile(filepath.Join(in, "004", "cut.plt"), []byte("not a PLT header\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(in, "00[04]", "*.plt")
	files, _, err := Match(glob)
	if err != nil {
		t.Fatal(err)
	}
	var traces []*trace.Trace
	rep, err := trace.ReadFiles(files, trace.ReadOptions{}, func(_ string, ts []*trace.Trace) { traces = append(traces, ts...) })
	if err != nil || len(rep.SkippedFiles) != 1 {
		t.Fatalf("reading: %v; skipped %d files", err, len(rep.SkippedFiles))
	}
	dir := t.TempDir()
	o := FitOptions{Input: glob, Output: filepath.Join(dir, "prior.json"), Report: filepath.Join(dir, "report.json"), FitParams: FitParams{Family: [2]float64{0.2, 0.8}}, Reading: Reading{AsCorpus: true}}
	want, wantRep, err := prior.Fit(traces, o.Params().Mode().(prior.Options))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var a bytes.Buffer
	if err := want.Write(&a); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b) {
		t.Errorf("pipeline prior\n%s\nprior.Fit\n%s", b, a.Bytes())
	}
	// The private corpus index lands beside the prior, as tracepriv fit
	// writes it.
	if x, err := trace.ReadCorpusIndexFile(prior.CorpusIndexPath(o.Output)); err != nil || !reflect.DeepEqual(x, wantRep.CorpusIndex) {
		t.Errorf("corpus index beside the prior: %v", err)
	}
	// The report too, but for the per-window fits (not written), the
	// single machine's goroutines and the private index (its own file,
	// checked above).
	wantRep.Fits, wantRep.Workers, wantRep.CorpusIndex = nil, 0, nil
	if !reflect.DeepEqual(res.Report, wantRep) {
		t.Errorf("pipeline report\n%+v\nprior.Fit\n%+v", res.Report, wantRep)
	}
	if res.Unreadable != 1 {
		t.Errorf("%d unreadable files counted, want 1", res.Unreadable)
	}
	// Windows of up to two hours, compared across kernels: users 000 and
	// 004 give 14.
	if res.Prior.Fit.Windows < 10 || *res.Prior.Fit.FamilyQuantiles != o.Family {
		t.Errorf("prior fitted on %d windows with family %v", res.Prior.Fit.Windows, *res.Prior.Fit.FamilyQuantiles)
	}
}

// TestMatch: patterns with ** and wildcards, directories and files match
// what they should, in the single machine's order, under the right root.
func TestMatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"a/x.plt", "a/b/y.plt", "a/b/c/z.PLT", "a.b/w.plt", "a/readme.txt", "top.csv"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	rel := func(paths []string) string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i], _ = filepath.Rel(dir, p)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ pattern, root, files, ignored string }{
		{"**/*.plt", "", "a.b/w.plt a/b/y.plt a/x.plt", ""},
		{"a/**/*.plt", "a", "a/b/y.plt a/x.plt", ""},
		{"a/**", "a", "a/b/c/z.PLT a/b/y.plt a/x.plt", "a/readme.txt"},
		{"a/*/*.plt", "a", "a/b/y.plt", ""},
		{"a*/x.plt", "", "a/x.plt", ""},
		{"a", "a", "a/b/c/z.PLT a/b/y.plt a/x.plt", "a/readme.txt"},
		{"top.csv", "", "top.csv", ""},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			t.Parallel()
			pattern := filepath.Join(dir, c.pattern)
			root, err := GlobRoot(pattern)
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := filepath.Rel(dir, root); r != filepath.Clean(c.root+"/.") && !(c.root == "" && r == ".") {
				t.Errorf("root %s, want %s", r, c.root)
			}
			files, ignored, err := Match(pattern)
			if err != nil {
				t.Fatal(err)
			}
			if rel(files) != c.files || rel(ignored) != c.ignored {
				t.Errorf("files %q ignored %q, want %q and %q", rel(files), rel(ignored), c.files, c.ignored)
			}
		})
	}
	if _, _, err := Match(filepath.Join(dir, "**", "*.gpx")); err == nil {
		t.Error("a pattern matching nothing was accepted")
	}
}

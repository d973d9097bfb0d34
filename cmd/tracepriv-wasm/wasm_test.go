//go:build !js

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/internal/sample/synth"
	"github.com/tracepriv/tracepriv/internal/wasmbuild"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// The tests here run the module (built from the sources, as go generate
// builds the one tracepriv serve serves) in Node.js and in headless
// Chromium, and compare what it answers with the Go library natively.

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// module builds the module once per test binary.
func module(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := wasmbuild.Root(".")
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "tracepriv-wasm-test")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "tracepriv.wasm")
		buildErr = wasmbuild.Build(context.Background(), root, buildPath)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// sessionCase and releaseCase are runCases's input (testdata/cases.js);
// a nil Seed calls the crypto entry point.
type sessionCase struct {
	Config  string       `json:"config"`
	Seed    *int64       `json:"seed"`
	Queries [][3]float64 `json:"queries"` // lat, lon, unix milliseconds
}

type releaseCase struct {
	Trace   string `json:"trace"`
	Format  string `json:"format"`
	Options string `json:"options"`
	Seed    *int64 `json:"seed"`
	// Plan makes the case a planned release: planRelease, then draw.
	Plan bool `json:"plan,omitempty"`
}

type input struct {
	Sessions []sessionCase  `json:"sessions"`
	Releases []releaseCase  `json:"releases"`
	Designs  []storedDesign `json:"designs,omitempty"`
}

// output is runCases's output.
type output struct {
	Version  string `json:"version"`
	Sessions []struct {
		Answers []string  `json:"answers"`
		MS      []float64 `json:"ms"`
		State   string    `json:"state"`
		TotalMS float64   `json:"total_ms"`
		Error   string    `json:"error"`
	} `json:"sessions"`
	Releases []struct {
		Answer string  `json:"answer"`
		MS     float64 `json:"ms"`
		// PlanMS and DrawMS split a planned release's MS; PlannedSHA256 is
		// the digest its plan named before the draw.
		PlanMS        float64 `json:"plan_ms"`
		DrawMS        float64 `json:"draw_ms"`
		PlannedSHA256 string  `json:"planned_sha256"`
		// Design and DesignKey are the plan's envelope design (plan.design).
		Design    string `json:"design"`
		DesignKey string `json:"design_key"`
	} `json:"releases"`
	// UseDesign are the module's answers to the input's Designs, and
	// UseDesignMS the time they took.
	UseDesign   []string `json:"use_design"`
	UseDesignMS float64  `json:"use_design_ms"`
}

// storedDesign is an envelope design a page stored (plan.design under
// plan.design_key), given back with useDesign before the releases.
type storedDesign struct {
	Key string `json:"key"`
	Doc string `json:"doc"`
}

func seed(s int64) *int64 { return &s }

// walk is synth's made-up person: n fixes at 1 Hz in Beijing, a meander
// at walking to cycling speed with stops, as PLT.
func walk(t testing.TB, n int) string {
	t.Helper()
	b, err := synth.WalkPLT(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func queries(n int, lat, lon float64) [][3]float64 {
	t0 := float64(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC).UnixMilli())
	q := make([][3]float64, n)
	for i := range q {
		q[i] = [3]float64{lat + 0.0002*float64(i), lon + 0.0001*float64(i%9), t0 + 20_000*float64(i)}
	}
	return q
}

const (
	pmRate = `{"mechanism":"pm","manager":"fixed-rate","rate":0.002,"params":{"epsilon":0.023025850929940458},` +
		`"origin":{"lat":39.9042,"lon":116.4074},"noise":{"grid":1}}`
	pmUtility = `{"mechanism":"pm","manager":"fixed-utility","accuracy":3000,"predictor":"linear",` +
		`"params":{"epsilon":0.023025850929940458,"pr0":0.5},"origin":{"lat":39.9042,"lon":116.4074},"noise":{"grid":1}}`
	imPlanned = `{"mechanism":"im","manager":"planned","queries":30,"params":{"epsilon":0.1},` +
		`"origin":{"lat":39.9042,"lon":116.4074},"noise":{"grid":1}}`
	cipOptions = `{"epsilon":1,"lambda":2,"radius_m":100}`
)

// cases are the seeded runs compared byte for byte (every geoind manager
// and both mechanisms, run into the budget's end; CIP releases of the
// bundled trace and of a walk of walkN points), one crypto session and one
// crypto release, and two errors.
func cases(t testing.TB, walkN int) input {
	traces, err := sample.Traces()
	if err != nil {
		t.Fatal(err)
	}
	var plt bytes.Buffer
	if err := trace.Write(&plt, traces[:1], trace.PLT); err != nil {
		t.Fatal(err)
	}
	return input{
		Sessions: []sessionCase{
			{pmRate, seed(42), queries(60, 39.98, 116.31)},
			{pmUtility, seed(1), queries(40, 39.99, 116.32)},
			{imPlanned, seed(5), queries(31, 39.97, 116.30)}, // the 31st is refused: 30 planned
			{pmRate, nil, queries(3, 39.98, 116.31)},
			{strings.Replace(pmRate, `"grid":1`, `"grid":0`, 1), seed(1), nil},
		},
		Releases: []releaseCase{
			{plt.String(), "plt", cipOptions, seed(9), false},
			{walk(t, walkN), "plt", strings.Replace(cipOptions, "}", `,"output":"csv"}`, 1), seed(11), false},
			{plt.String(), "plt", cipOptions, nil, false},
			{plt.String(), "plt", `{"epsilon":1,"lambda":2,"radius":100}`, seed(1), false},
			// Charge before draw: planned, then drawn, it is the release above.
			{plt.String(), "plt", cipOptions, seed(9), true},
		},
	}
}

// failJSON is the module's answer to an error (main.go's fail).
func failJSON(err error) string {
	b, _ := json.Marshal(struct {
		Error     string `json:"error"`
		Exhausted bool   `json:"exhausted,omitempty"`
	}{err.Error(), device.Exhausted(err)})
	return string(b)
}

// nativeAnswers are native's answers to the seeded cases.
type nativeAnswers struct {
	sessions [][]string
	releases []string
}

// nativeAsync runs native in the background while the module runs in
// another process (Node.js, Chromium), so that the two computations
// overlap on two cores; the returned func waits for its answers.
func nativeAsync(t testing.TB, in input) func() nativeAnswers {
	ch := make(chan nativeAnswers, 1)
	go func() {
		var a nativeAnswers
		a.sessions, a.releases = native(t, in)
		ch <- a
	}()
	return sync.OnceValue(func() nativeAnswers { return <-ch })
}

// walkFull is the walk's length in the full suite's module tests (Node.js
// and Chromium alike), so that native answers once for both.
const walkFull = 10_000

var sharedNative struct {
	sync.Mutex
	in   map[int]input
	want map[int]func() nativeAnswers
}

// sharedCases returns cases(t, n) and native's answers to them (started on
// first use, off the caller's goroutine), once per test binary and length:
// the module tests in Node.js and Chromium compare with the same native
// release instead of each computing it.
func sharedCases(t testing.TB, n int) (input, func() nativeAnswers) {
	sharedNative.Lock()
	defer sharedNative.Unlock()
	if sharedNative.in == nil {
		sharedNative.in, sharedNative.want = map[int]input{}, map[int]func() nativeAnswers{}
	}
	if _, ok := sharedNative.in[n]; !ok {
		in := cases(t, n)
		sharedNative.in[n], sharedNative.want[n] = in, nativeAsync(t, in)
	}
	return sharedNative.in[n], sharedNative.want[n]
}

// native runs the seeded cases through package device natively: what the
// module must answer, byte for byte. device's own tests check that it
// answers what geoind and sanitize answer. It reports no failure itself
// (nativeAsync calls it off the test's goroutine).
func native(t testing.TB, in input) (sessions [][]string, releases []string) {
	t.Helper()
	for _, c := range in.Sessions {
		var ans []string
		if c.Seed == nil {
			sessions = append(sessions, nil)
			continue
		}
		s, err := device.NewSeededSession(c.Config, *c.Seed)
		if err != nil {
			sessions = append(sessions, []string{failJSON(err)})
			continue
		}
		for _, q := range c.Queries {
			a, err := s.Query(q[0], q[1], int64(q[2]))
			if err != nil {
				a = failJSON(err)
			}
			ans = append(ans, a)
		}
		sessions = append(sessions, ans)
	}
	for _, r := range in.Releases {
		if r.Seed == nil {
			releases = append(releases, "")
			continue
		}
		out, err := device.ReleaseSeeded([]byte(r.Trace), r.Format, r.Options, *r.Seed)
		a := string(out)
		if err != nil {
			a = failJSON(err)
		}
		releases = append(releases, a)
	}
	return sessions, releases
}

// certTolerance is how far a number of a certificate computed in the
// module may be from the native one, relatively. The noise and so the
// released trace are integer and exact arithmetic (the float-safe
// samplers) and come out byte-identical, but the certificate's bounds are
// floating point, and on amd64 Go's math.Exp (hence Pow and Erf) is
// assembly that rounds differently from the portable Go code js/wasm runs
// (measured: Exp, Pow and Erf differ in the last bit on some inputs; Log,
// Sqrt, Sin, Cos, Atan2, Hypot, Log1p, Expm1 and Lgamma agree); through
// the envelope's LP this moves the certificate's numbers in their last
// digits: 3.4e-10 relatively at most on the bundled and the walk traces
// (TestNodeSameAsNative logs the largest and where), epsilons 1e-12 to
// 1e-11. Anything else that differs (a draw, a design, a field) differs
// by far more, and every string, flag and the trace must be identical.
const certTolerance = 1e-8

// sameRelease checks that the module's release answer is the native one:
// the released trace and every other field byte for byte, the certificate
// with every string and flag identical and every number within
// certTolerance (its "seconds", the time the release took, apart), and
// certificate_sha256 the digest of the certificate as answered. It returns
// the largest relative difference of a certificate number.
func sameRelease(t reporter, where, got, want string) (worst float64, worstAt string) {
	t.Helper()
	var g, w map[string]any
	for _, x := range []struct {
		doc string
		m   *map[string]any
	}{{got, &g}, {want, &w}} {
		if err := json.Unmarshal([]byte(x.doc), x.m); err != nil {
			t.Errorf("%s: %v: %.200s", where, err, x.doc)
			return 0, ""
		}
		if cert, ok := (*x.m)["certificate"].(string); ok {
			sum := sha256.Sum256([]byte(cert))
			if hex.EncodeToString(sum[:]) != (*x.m)["certificate_sha256"] {
				t.Errorf("%s: certificate_sha256 is not the digest of the certificate", where)
			}
		}
	}
	gc, _ := g["certificate"].(string)
	wc, _ := w["certificate"].(string)
	for _, m := range []map[string]any{g, w} {
		delete(m, "certificate")
		delete(m, "certificate_sha256")
		delete(m, "seconds") // the time the release took
	}
	if gb, wb := mustJSON(g), mustJSON(w); gb != wb {
		t.Errorf("%s: the module's release differs from the native one beyond its certificate:\n module %.300s\n native %.300s", where, gb, wb)
	}
	if (gc == "") != (wc == "") {
		t.Errorf("%s: a certificate on one side only", where)
		return 0, ""
	}
	if gc == "" {
		return 0, ""
	}
	var gv, wv any
	for _, x := range []struct {
		doc string
		v   *any
	}{{gc, &gv}, {wc, &wv}} {
		dec := json.NewDecoder(strings.NewReader(x.doc))
		dec.UseNumber()
		if err := dec.Decode(x.v); err != nil {
			t.Errorf("%s: %v", where, err)
			return 0, ""
		}
		delete((*x.v).(map[string]any), "seconds")
	}
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		switch av := a.(type) {
		case map[string]any:
			bv, ok := b.(map[string]any)
			if !ok || len(av) != len(bv) {
				t.Errorf("%s: certificate %s: the objects differ in their fields", where, path)
				return
			}
			for k := range av {
				walk(path+"."+k, av[k], bv[k])
			}
		case []any:
			bv, ok := b.([]any)
			if !ok || len(av) != len(bv) {
				t.Errorf("%s: certificate %s: the lists differ in length", where, path)
				return
			}
			for i := range av {
				walk(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])
			}
		case json.Number:
			bv, ok := b.(json.Number)
			if !ok {
				t.Errorf("%s: certificate %s: %v against %v", where, path, a, b)
				return
			}
			if av == bv {
				return
			}
			x, _ := av.Float64()
			y, _ := bv.Float64()
			rel := math.Abs(x-y) / math.Max(math.Abs(x), math.Abs(y))
			if rel > worst {
				worst, worstAt = rel, path
			}
			if !(rel <= certTolerance) {
				t.Errorf("%s: certificate %s: module %s, native %s (relative %.2g)", where, path, av, bv, rel)
			}
		default:
			if a != b {
				t.Errorf("%s: certificate %s: module %v, native %v", where, path, a, b)
			}
		}
	}
	walk("", gv, wv)
	return worst, worstAt
}

// reporter is what sameRelease reports to: a *testing.T, or a recorder
// for the negative control.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// recorder counts what it is told.
type recorder struct{ failed int }

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed++ }

func mustJSON(v any) string {
	b, _ := json.Marshal(v) // values decoded from JSON
	return string(b)
}

// compare checks the module's output against the native answers.
func compare(t testing.TB, where string, in input, got output, want nativeAnswers) {
	t.Helper()
	sessions, releases := want.sessions, want.releases
	if len(got.Sessions) != len(in.Sessions) || len(got.Releases) != len(in.Releases) {
		t.Fatalf("%s: %d sessions and %d releases answered, want %d and %d", where, len(got.Sessions), len(got.Releases), len(in.Sessions), len(in.Releases))
	}
	for i, c := range in.Sessions {
		g := got.Sessions[i]
		if c.Seed == nil {
			for _, a := range g.Answers {
				if !strings.Contains(a, `"randomness":"crypto","private":true`) {
					t.Errorf("%s: a crypto session's answer %.200s", where, a)
				}
			}
			continue
		}
		if g.Error != "" {
			if want := sessions[i][0]; g.Error != want {
				t.Errorf("%s: session %d: error %s, native %s", where, i, g.Error, want)
			}
			continue
		}
		if len(g.Answers) != len(sessions[i]) {
			t.Fatalf("%s: session %d: %d answers, native %d", where, i, len(g.Answers), len(sessions[i]))
		}
		for k, a := range g.Answers {
			if a != sessions[i][k] {
				t.Fatalf("%s: session %d, query %d:\n module %s\n native %s", where, i, k, a, sessions[i][k])
			}
		}
	}
	for i, c := range in.Releases {
		a := got.Releases[i].Answer
		if c.Seed == nil {
			if !strings.Contains(a, `"randomness":"crypto","private":true`) || !strings.Contains(a, `\"private\": true`) {
				t.Errorf("%s: a crypto release does not say it is private: %.300s", where, a)
			}
			continue
		}
		if c.Plan {
			var d struct {
				Digest string `json:"certificate_sha256"`
			}
			if err := json.Unmarshal([]byte(a), &d); err != nil || d.Digest == "" || d.Digest != got.Releases[i].PlannedSHA256 {
				t.Errorf("%s: release %d: drawn certificate sha256 %q, planned %q (%v)", where, i, d.Digest, got.Releases[i].PlannedSHA256, err)
			}
		}
		worst, at := sameRelease(t, fmt.Sprintf("%s: release %d", where, i), a, releases[i])
		t.Logf("%s: release %d: byte-identical trace and fields; certificate numbers within %.2g relatively (the largest at %s)", where, i, worst, at)
	}
	// Negative control: the comparison tells another draw apart (the
	// native release of case 0 with the next seed).
	c := in.Releases[0]
	other, err := device.ReleaseSeeded([]byte(c.Trace), c.Format, c.Options, *c.Seed+1)
	if err != nil {
		t.Fatal(err)
	}
	ctl := &recorder{}
	sameRelease(ctl, "control", got.Releases[0].Answer, string(other))
	if ctl.failed == 0 {
		t.Errorf("%s: the comparison did not tell apart a release drawn with another seed", where)
	}
}

// TestNodeSameAsNative runs the module in Node.js (Go's wasm_exec.js, as
// go_js_wasm_exec does) and checks that the same seeded inputs give
// byte-identical answers to the Go library natively: geoind runs of every
// manager into the budget's end, and CIP releases with their certificates.
func TestNodeSameAsNative(t *testing.T) {
	t.Parallel()  // a subprocess (node, go test) does the work: overlap it with the others
	n := walkFull // Chromium's length: native answers once for both
	if testing.Short() {
		// 20 minutes: the same comparison on a long linear-path release.
		n = 1_200
	}
	node, execJS := nodeTools(t)
	in, want := sharedCases(t, n)
	nodeSameAsNative(t, node, execJS, n, in, want)
}

// BenchmarkNodeDay is TestNodeSameAsNative on a day at 1 Hz (86,400
// points): an experiment, not a test (38.8 CPU-s measured, most of it the
// release in Node.js); the suite compares 10,000 points, Chromium's length.
// It fails as the test does if an answer differs from native's.
func BenchmarkNodeDay(b *testing.B) {
	node, execJS := nodeTools(b)
	in, want := sharedCases(b, 86_400)
	for b.Loop() {
		nodeSameAsNative(b, node, execJS, 86_400, in, want)
	}
}

// nodeTools finds Node.js and Go's wasm_exec.js, or skips the test.
func nodeTools(t testing.TB) (node, execJS string) {
	t.Helper()
	node, err := wasmbuild.Node()
	if err != nil {
		t.Skip(err)
	}
	execJS, err = wasmbuild.Support("wasm_exec.js")
	if err != nil {
		t.Fatal(err)
	}
	return node, execJS
}

// nodeSameAsNative runs the module on in (its walk n points long) in
// Node.js and compares with native's answers.
func nodeSameAsNative(t testing.TB, node, execJS string, n int, in input, want func() nativeAnswers) {
	t.Helper()
	inFile := filepath.Join(t.TempDir(), "input.json")
	b, _ := json.Marshal(in)
	if err := os.WriteFile(inFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	driver, _ := filepath.Abs(filepath.Join("testdata", "node.js"))
	mod := module(t)
	cmd := exec.Command(node, "--stack-size=8192", driver, execJS, mod, inFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	var got output
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatalf("node's output: %v: %.300s", err, res)
	}
	t.Logf("node %s: %s in all; the %d-point release took %.0f ms", strings.TrimSpace(nodeVersion(node)), time.Since(start).Round(time.Millisecond), n, got.Releases[1].MS)
	compare(t, "node", in, got, want())
}

func nodeVersion(node string) string {
	b, _ := exec.Command(node, "--version").Output()
	return string(b)
}

// TestWasmSamplingTests runs the float-safety falsifiers of geoind's
// planar Laplace and noise's samplers compiled for js/wasm, in Node.js
// (go test -exec go_js_wasm_exec): the same tests on the target the
// browser runs, not only natively.
func TestWasmSamplingTests(t *testing.T) {
	t.Parallel() // a subprocess (node, go test) does the work: overlap it with the others
	if testing.Short() {
		t.Skip("full suite: the float-safety falsifiers rerun under js/wasm (they run natively in -short)")
	}
	if _, err := wasmbuild.Node(); err != nil {
		t.Skip(err)
	}
	runner, err := wasmbuild.Support("go_js_wasm_exec")
	if err != nil {
		t.Fatal(err)
	}
	root, err := wasmbuild.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	for pkg, run := range map[string]string{
		"./geoind": "TestReleaseFloatSafety|TestReleaseSameCellIdentical|TestNoiseScaleLimit",
		"./noise":  "TestLatticeCoverage|TestSupportAttackFirstPoint|TestSameCell|TestExactPathMatchesFloatPath|TestApplyFloatBound|TestSecureSanity|TestSecureMath|TestLazyNormal|TestPlanar|TestProdErrIsFMA|TestDigitFastPaths",
	} {
		t.Run(strings.TrimPrefix(pkg, "./"), func(t *testing.T) {
			t.Parallel() // the two packages' builds and Node.js runs overlap
			wasmTests(t, root, runner, pkg, run)
		})
	}
}

// wasmTests runs the tests run of package pkg under js/wasm in Node.js
// and checks that mustPass[pkg] passed.
func wasmTests(t *testing.T, root, runner, pkg, run string) {
	args := []string{"test", "-count=1", "-exec", runner, "-run", run, "-v", pkg}
	if testing.Short() {
		args = append([]string{"test", "-short"}, args[1:]...)
	}
	cmd := exec.Command(wasmbuild.GoTool(), args...)
	cmd.Dir = root
	cmd.Env = wasmbuild.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	passed := map[string]bool{}
	var names []string
	for _, p := range regexp.MustCompile(`(?m)^--- PASS: (\S+)`).FindAllStringSubmatch(string(out), -1) {
		passed[p[1]] = true
		names = append(names, p[1])
	}
	// The float-safety falsifiers themselves must have run and passed
	// (statistical ones may skip under -short, as natively).
	for _, must := range mustPass[pkg] {
		if !passed[must] {
			t.Errorf("%s under js/wasm: %s did not pass:\n%s", pkg, must, out)
		}
	}
	t.Logf("%s under js/wasm: %d passed (%s)", pkg, len(names), strings.Join(names, ", "))
}

// mustPass are the float-safety falsifiers TestWasmSamplingTests needs to
// see pass under js/wasm.
var mustPass = map[string][]string{
	"./geoind": {"TestReleaseFloatSafety", "TestReleaseSameCellIdentical"},
	"./noise":  {"TestLatticeCoverage", "TestSupportAttackFirstPoint", "TestSameCell", "TestExactPathMatchesFloatPath", "TestProdErrIsFMA", "TestDigitFastPaths"},
}

// TestModuleDependencies checks what the module links for js/wasm: no cgo,
// no database driver or SQL, no server, no HTTP, no plotting; the
// mechanisms and their numerics only (the module's size and attack
// surface stay those of the mechanisms).
func TestModuleDependencies(t *testing.T) {
	root, err := wasmbuild.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wasmbuild.GoTool(), "list", "-deps", wasmbuild.Package)
	cmd.Dir = root
	cmd.Env = wasmbuild.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{"github.com/tracepriv/tracepriv/geoind", "github.com/tracepriv/tracepriv/sanitize", "crypto/rand"} {
		if !slices.Contains(deps, want) {
			t.Errorf("the module does not link %s", want)
		}
	}
	for _, d := range deps {
		for _, bad := range []string{"runtime/cgo", "database/sql", "modernc.org/", "github.com/mattn/", "github.com/jackc/",
			"net/http", "github.com/tracepriv/tracepriv/server", "gonum.org/v1/plot", "github.com/tracepriv/tracepriv/viz"} {
			if d == bad || strings.HasPrefix(d, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(d, bad)) {
				t.Errorf("the module links %s", d)
			}
		}
	}
}

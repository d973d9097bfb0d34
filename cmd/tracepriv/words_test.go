package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
)

// Issue 32: epsilon in plain words. The expected percentages are computed
// here from the epsilon, independently of the library: e^x/(1+e^x) for a
// pure (metric) DP bound x, and Phi(mu/2) with mu = sqrt(2 eps/lambda) for a
// Rényi CIP bound (Gaussian shift; sanitize.Meaning's derivation).

func pureGuess(x float64) string {
	p := math.Exp(x) / (1 + math.Exp(x))
	if p >= 0.9995 {
		return "exceeds 99.9 %"
	}
	return fmt.Sprintf("at most %.1f %%", 100*p)
}

func renyiGuess(eps, lambda float64) string {
	mu := math.Sqrt(2 * eps / lambda)
	return fmt.Sprintf("at most %.1f %%", 100*0.5*math.Erfc(-mu/2/math.Sqrt2))
}

// flat joins s's words with single spaces, so that wrapped help matches.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestEpsilonInPlainWordsHelp(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want []string
	}{
		{[]string{"sanitize"}, []string{renyiGuess(1, 2)}},
		{[]string{"demo"}, []string{renyiGuess(1, 2)}},
		{[]string{"geoind"}, []string{pureGuess(math.Ln10), pureGuess(10 * math.Ln10), "100 m apart", "1 km apart"}},
		{[]string{"geoind", "query"}, []string{pureGuess(math.Ln10), "100 m apart", "1 km apart"}},
		{[]string{"geoind", "sanitize"}, []string{pureGuess(math.Ln10), "100 m apart", "1 km apart"}},
		{[]string{"release"}, []string{pureGuess(1)}},
		{[]string{"serve"}, []string{pureGuess(0.023 * 100), pureGuess(0.023 * 1000), renyiGuess(1, 2)}},
	} {
		stdout, _, err := run(t, append(tc.cmd, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v", tc.cmd, err)
		}
		h := flat(stdout)
		if !strings.Contains(h, "guess") {
			t.Errorf("%v --help never says what a guess can achieve", tc.cmd)
		}
		for _, w := range tc.want {
			if !strings.Contains(h, w) {
				t.Errorf("%v --help lacks %q", tc.cmd, w)
			}
		}
	}
}

// The text outputs translate the epsilon they print, with numbers computed
// from that epsilon, and sanitize explains its prior-posterior gap.
func TestEpsilonInPlainWordsOutput(t *testing.T) {
	dir, in, prior := samplePaths(t)
	stdout, _, err := run(t, "sanitize", "--in", in, "--out", filepath.Join(dir, "s.plt"), "--prior", prior,
		"--epsilon", "0.7", "--lambda", "3", "--radius", "150", "--seed", "1", "--no-ledger", "-q")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`certified epsilon ([0-9.e+-]+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no certified epsilon in\n%s", stdout)
	}
	eps, _ := strconv.ParseFloat(m[1], 64)
	out := flat(stdout)
	// The printed epsilon has 4 digits; the meaning is computed from the
	// exact one, and one decimal of a per cent does not see the difference
	// unless it sits on a rounding edge.
	if w := renyiGuess(eps, 3); !strings.Contains(out, "what it means: an adversary who must tell two places 150 m apart") || !strings.Contains(out, w) {
		t.Errorf("sanitize: no plain words for epsilon %g (%q) in\n%s", eps, w, stdout)
	}
	if !regexp.MustCompile(`prior-posterior gap [0-9.]+ at delta [0-9.e-]+: except with probability`).MatchString(out) {
		t.Errorf("sanitize: the prior-posterior gap is not explained in\n%s", stdout)
	}

	stdout, _, err = run(t, "geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, "g.csv"), "--origin", "39.9042,116.4074",
		"--every", "60s", "--eps-star", "2", "--radius", "200", "--seed", "1", "--no-ledger", "-q")
	if err != nil {
		t.Fatal(err)
	}
	out = flat(stdout)
	for _, w := range []string{"what each person's budget means: ε 0.01 per metre", pureGuess(0.01 * 100), pureGuess(0.01 * 1000),
		"expected error at most", "a proven bound on the mean"} {
		if !strings.Contains(out, w) {
			t.Errorf("geoind sanitize: %q missing in\n%s", w, stdout)
		}
	}

	stdout, _, err = run(t, "geoind", "query", "--state", filepath.Join(dir, "st.json"), "--key-dir", filepath.Join(dir, "keys"),
		"--uid", "u", "--origin", "39.9042,116.4074", "--lat", "39.98", "--lon", "116.31", "--epsilon", "0.004", "--seed", "1", "--no-ledger", "-q")
	if err != nil {
		t.Fatal(err)
	}
	out = flat(stdout)
	for _, w := range []string{"ε 0.004 per metre", pureGuess(0.4), pureGuess(4)} {
		if !strings.Contains(out, w) {
			t.Errorf("geoind query: %q missing in\n%s", w, stdout)
		}
	}

	stdout, _, err = run(t, "geoind", "quantile", "--epsilon", "0.002")
	if err != nil {
		t.Fatal(err)
	}
	if out = flat(stdout); !strings.Contains(out, pureGuess(0.2)) || !strings.Contains(out, pureGuess(2)) {
		t.Errorf("geoind quantile: no plain words for 0.002 per metre in\n%s", stdout)
	}

	stdout, _, err = run(t, "release", "--in", "../../internal/sample", "--out", filepath.Join(dir, "rel"), "--mechanism", "prefix",
		"--epsilon", "2", "--cell-m", "5000", "--bbox", testBBox, "--max-len", "3", "--max-seqs", "1", "--seed", "1", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if out = flat(stdout); !strings.Contains(out, "what it means: epsilon 2 per person") || !strings.Contains(out, pureGuess(2)) {
		t.Errorf("release: no plain words for epsilon 2 in\n%s", stdout)
	}
}

// Issue 32: fit reported nothing off a terminal (a log, a pipe) for the
// minutes a corpus takes: its progress now goes to stderr as lines, and
// -q and --json silence it (as attack's).
func TestFitProgressOffTerminal(t *testing.T) {
	t.Parallel()
	dir, in, _ := samplePaths(t)
	// Progress is the wiring checked, not the fit (prior's tests): two
	// kernels on one window of at most 100 points print the same lines as
	// the default fit.
	small := []string{"--kernels", "rbf,matern32", "--max-windows", "1", "--max-points", "100"}
	_, stderr, err := run(t, append([]string{"fit", "--in", in, "--out", filepath.Join(dir, "p.json")}, small...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fit: reading: 1/1 files", "fit: fitting windows: "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("fit's stderr lacks %q:\n%s", want, stderr)
		}
	}
	for i, quiet := range []string{"-q", "--json"} {
		_, stderr, err = run(t, append([]string{"fit", "--in", in, "--out", filepath.Join(dir, fmt.Sprintf("q%d.json", i)), quiet}, small...)...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stderr, "fit:") {
			t.Errorf("fit %s printed progress:\n%s", quiet, stderr)
		}
	}
}

// Issue 32: attack runs on the 1- and 2-point traces sanitize releases,
// and says what it can conclude from them.
func TestAttackFewPoints(t *testing.T) {
	dir, _, prior := samplePaths(t)
	lines := strings.SplitAfter(string(sample.PLT), "\n")
	for n, want := range map[int]string{1: "the release itself is the best reconstruction", 2: "a linear mean needs more points than the 2 released"} {
		in, out := filepath.Join(dir, fmt.Sprintf("p%d.plt", n)), filepath.Join(dir, fmt.Sprintf("p%d.s.plt", n))
		if err := os.WriteFile(in, []byte(strings.Join(lines[:6+n], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--seed", "1", "--no-ledger", "-q"); err != nil {
			t.Fatalf("%d points: sanitize: %v", n, err)
		}
		stdout, _, err := run(t, "attack", "--in", out, "--truth", in, "-q")
		if err != nil {
			t.Fatalf("%d points: attack: %v", n, err)
		}
		if !strings.Contains(stdout, fmt.Sprintf("%d points", n)) || !strings.Contains(stdout, want) {
			t.Errorf("%d points: attack says\n%s\nwant %q", n, stdout, want)
		}
	}
}

// Issue 32: parameters at the extremes get an error that names the flag
// and the fix, with numbers people can read: never "target loss factor 0",
// a 150-digit number of km, "+Inf km", a hang, or a release.
func TestParameterExtremes(t *testing.T) {
	dir, in, prior := samplePaths(t)
	san := func(flags ...string) []string {
		return append([]string{"sanitize", "--in", in, "--out", filepath.Join(dir, "x.plt"), "--force", "--prior", prior, "--seed", "1", "--no-ledger", "-q"}, flags...)
	}
	geo := func(flags ...string) []string {
		return append([]string{"geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, "g.csv"), "--force", "--origin", "39.9042,116.4074", "--seed", "1", "--no-ledger", "-q"}, flags...)
	}
	rel := func(flags ...string) []string {
		return append([]string{"release", "--in", "../../internal/sample", "--out", filepath.Join(dir, "rel"), "--force", "--mechanism", "ngram",
			"--bbox", testBBox, "--max-len", "3", "--max-seqs", "1", "--seed", "1", "-q"}, flags...)
	}
	des := func(flags ...string) []string {
		return append([]string{"cip", "design", "--kernel", "rbf", "--lengthscale", "3", "--n", "20", "--all-secrets"}, flags...)
	}
	long := regexp.MustCompile(`[0-9]{13,}`)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{san("--epsilon", "1", "--lambda", "2", "--radius", "1e308"), "--radius 1e+308"},
		{san("--epsilon", "1", "--lambda", "2", "--radius", "1e-300"), "--radius"},
		{san("--epsilon", "1e-300", "--lambda", "2", "--radius", "100"), "--epsilon"},
		{san("--epsilon", "1e300", "--lambda", "2", "--radius", "100"), "--epsilon"},
		{san("--epsilon", "1", "--lambda", "1e300", "--radius", "100"), "--lambda"},
		{san("--epsilon", "1", "--lambda", "2", "--radius", "NaN"), "--radius"},
		{geo("--epsilon", "1e-300"), "--epsilon"},
		{geo("--radius", "1e308"), "--radius"},
		{geo("--eps-star", "1e308", "--radius", "1e-308"), "--eps-star"},
		{geo("--grid", "1e308"), "--grid"},
		{rel("--epsilon", "1e-300", "--cell-m", "5000"), "--epsilon"},
		{rel("--epsilon", "0", "--cell-m", "5000"), "--epsilon"},
		{rel("--epsilon", "1", "--cell-m", "1e-300"), "--cell-m"},
		{des("--target-epsilon", "1", "--lambda", "2", "--radius", "1e308"), "--radius"},
		{des("--target-epsilon", "1", "--lambda", "2", "--radius", "1e-300"), "--radius"},
	} {
		_, _, err := run(t, c.args...)
		if err == nil {
			t.Errorf("%v: accepted", c.args[len(c.args)-6:])
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.flag) || long.MatchString(msg) || strings.Contains(msg, "loss factor 0 ") || strings.Contains(msg, "Inf km") {
			t.Errorf("%v: want an error naming %s with readable numbers, got\n%s", c.args[len(c.args)-6:], c.flag, msg)
		}
	}
}

package numeric

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Abs(want)
}

// Reference quantiles: python3-mpmath 1.3.0 at 60 digits, solving
// log ncdf(x) = log p by findroot for the float64 p shown (exactly, as
// mp.mpf(p)), and sqrt(2)·erfinv(2p−1) for p = 0.99999.
var quantileTable = []struct{ p, x float64 }{
	{5e-324, -38.46740561714434625078},
	{2.2250738585072014e-308, -37.51937934714449982068},
	{1e-300, -37.04709629936119923655},
	{1e-200, -30.20559417957964306312},
	{1e-100, -21.27345356096532429418},
	{1e-50, -14.93333753478848898066},
	{1e-20, -9.262340089798407579572},
	{1e-10, -6.3613409024040561991},
	{1e-05, -4.264890793922824610234},
	{0.01, -2.326347874040841093075},
	{0.3, -0.5244005127080408159695},
	{0.9, 1.281551565544600593487},
	{0.99999, 4.264890793923840769948},
}

// PhiInv keeps its relative accuracy deep in the lower tail, down to the
// smallest subnormal, where math.Erfcinv has long returned −Inf.
func TestPhiInvTails(t *testing.T) {
	for _, c := range quantileTable {
		if got := PhiInv(c.p); relErr(got, c.x) > 4e-15 {
			t.Errorf("PhiInv(%g) = %.17g, mpmath %.17g (rel err %.2g)", c.p, got, c.x, relErr(got, c.x))
		}
	}
	if got := -math.Sqrt2 * math.Erfcinv(2e-20); !math.IsInf(got, -1) && relErr(got, -9.262340089798407579572) < 1e-10 {
		t.Log("math.Erfcinv is now accurate at 1e-20; PhiInv's reason to use AS241 is gone")
	}
	for _, c := range []struct{ p, want float64 }{
		{0, math.Inf(-1)}, {-1, math.Inf(-1)}, {1, math.Inf(1)}, {2, math.Inf(1)}, {0.5, 0},
	} {
		if got := PhiInv(c.p); got != c.want {
			t.Errorf("PhiInv(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if !math.IsNaN(PhiInv(math.NaN())) {
		t.Error("PhiInv(NaN) is not NaN")
	}
}

// Reference values: python3-mpmath 1.3.0 at 60 digits, ncdf(x) and
// log(ncdf(x)).
func TestPhiAndLogPhi(t *testing.T) {
	for _, c := range []struct{ x, phi, logPhi, tol float64 }{
		{-38, 2.885428360068784308351e-316, -726.5572160188201300965, 1e-7}, // Φ is subnormal
		// math.Erfc itself is good to ~1e-13 relative this far out.
		{-30, 4.906713927148187059534e-198, -454.3212439563431971074, 2e-13},
		{-20, 2.753624118606233695076e-89, -203.9171553710972639368, 2e-13},
		{-10, 7.619853024160526065973e-24, -53.23128515051247057835, 1e-14},
		{-1, 0.1586552539314570514148, -1.841021645009263505771, 1e-15},
		{1, 0.8413447460685429485852, -0.1727537790234498895265, 1e-15},
		{5, 0.9999997133484281208061, -2.866516129637635933846e-7, 1e-15},
	} {
		if got := Phi(c.x); relErr(got, c.phi) > c.tol {
			t.Errorf("Phi(%g) = %.17g, mpmath %.17g", c.x, got, c.phi)
		}
		if got := LogPhi(c.x); relErr(got, c.logPhi) > 1e-14 {
			t.Errorf("LogPhi(%g) = %.17g, mpmath %.17g", c.x, got, c.logPhi)
		}
	}
	// Far below the underflow of Φ.
	for _, c := range []struct{ x, want float64 }{
		{-40, -804.6084420137537881666},
		{-1000, -500007.8266948121843098},
		{-1e5, -5000000012.431863998275},
		{8, -6.220960574271786058534e-16},
	} {
		if got := LogPhi(c.x); relErr(got, c.want) > 1e-14 {
			t.Errorf("LogPhi(%g) = %.17g, mpmath %.17g", c.x, got, c.want)
		}
	}
	for _, x := range []float64{-0.5, -3, -7, -25} {
		if got, want := LogPhiScaled(x), LogPhi(x)+x*x/2; math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("LogPhiScaled(%g) = %.17g, LogPhi + x²/2 = %.17g", x, got, want)
		}
	}
	// erfcx across the switch from the direct form to the continued fraction.
	for _, z := range []float64{4.999999, 5, 5.000001} {
		direct := math.Exp(z*z) * math.Erfc(z)
		if got := Erfcx(z); relErr(got, direct) > 1e-13 {
			t.Errorf("Erfcx(%v) = %.17g, direct %.17g", z, got, direct)
		}
	}
}

// TestPhiInvMpmath checks PhiInv against mpmath at 200 probabilities spread
// log-uniformly over [1e-320, 0.5] and their complements, when python3 with
// mpmath is installed (Debian: python3-mpmath); it is skipped otherwise.
func TestPhiInvMpmath(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	var ps []float64
	for i := range 200 {
		ps = append(ps, math.Pow(10, -320+float64(i)*(320-math.Log10(2))/199))
	}
	ps = append(ps, 0.6, 0.75, 0.9, 0.99, 0.999999, 1-1e-12)
	var in bytes.Buffer
	for _, p := range ps {
		fmt.Fprintf(&in, "%s\n", strconv.FormatFloat(p, 'g', -1, 64))
	}
	const script = `
import sys, mpmath as mp
mp.mp.dps = 60
for line in sys.stdin:
    p = mp.mpf(float(line))
    if p == mp.mpf(0.5):
        print(0); continue
    lo = min(p, 1 - p)
    x0 = -mp.sqrt(-2 * mp.log(lo))
    x = mp.findroot(lambda x: mp.log(mp.ncdf(x)) - mp.log(lo), x0)
    print(mp.nstr(x if p < 0.5 else -x, 25))
`
	// One python3 process: the import is most of its time, so whether
	// mpmath is there is read from the script's own failure.
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && strings.Contains(stderr.String(), "No module named 'mpmath'") {
		t.Skip("python3 has no mpmath")
	}
	if err != nil {
		t.Fatalf("mpmath: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	worst := 0.0
	for i := 0; sc.Scan(); i++ {
		want, err := strconv.ParseFloat(strings.TrimSpace(sc.Text()), 64)
		if err != nil {
			t.Fatal(err)
		}
		p := ps[i]
		got := PhiInv(p)
		// Above 1/2 the float p itself is coarse: 1 − p carries the
		// information, so compare against the quantile of the float p.
		e := relErr(got, want)
		if want == 0 {
			e = math.Abs(got)
		}
		worst = math.Max(worst, e)
		if e > 4e-15 {
			t.Errorf("PhiInv(%g) = %.17g, mpmath %.17g (rel err %.2g)", p, got, want, e)
		}
	}
	t.Logf("worst relative error over %d probabilities: %.2g", len(ps), worst)
}

package risk

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/noise"
)

// The parameter a Mechanism is given by and calibrated in.
const (
	ParamEpsilon = "epsilon" // the privacy parameter ε
	ParamSigma   = "sigma"   // Gaussian noise in units of the sensitivity
)

// Params are the public parameters of a mechanism in the RAD setting of
// this package: a uniform prior over M candidate values, no auxiliary
// knowledge and exact reconstruction.
type Params struct {
	M int // candidate values (at least 2)
	// Epsilon and Delta are the privacy guarantee of an ε-mechanism, or
	// the (ε, δ) from which a σ-mechanism with SigmaFor derives σ.
	Epsilon, Delta float64
	// Sigma is the noise of a σ-mechanism, in units of the sensitivity
	// (DP-SGD: the noise multiplier).
	Sigma float64
	// Steps is the number of DP-SGD steps (UsesSteps mechanisms).
	Steps int
}

// RADResult is what Mechanism.RAD returns.
type RADResult struct {
	// RAD is the exact 0-RAD (Theorem 5.3), or for DP-SGD the Theorem 5.11
	// bound, and Bound cites where it comes from.
	RAD   float64
	Bound string
	// TVBound is Theorem 5.2's black-box bound at the same parameters,
	// which holds with any auxiliary knowledge: a comparison.
	TVBound float64
}

// AuditTarget is a mechanism as tracepriv implements it, ready for an
// Auditor: Audit in the table builds it.
type AuditTarget struct {
	// Exactly one of Sample (real outputs) and Discrete (integer outputs)
	// is set.
	Sample   Sampler
	Discrete DiscreteSampler
	// Bayes is the Bayes (MAP) attack on an output under a uniform prior
	// (Algorithm 1); for Discrete targets it receives the output as a
	// float64.
	Bayes func(theta float64) int
	// ExactRAD is Theorem 5.3 at the claimed parameter: an audit whose
	// interval lies above it refutes the claim.
	ExactRAD float64
	// Sigma is the σ the mechanism was calibrated to (σ-mechanisms); 0
	// otherwise.
	Sigma float64
}

// Mechanism is one entry of the table of mechanisms that the RAD tools
// know: how to evaluate its RAD, invert it, and (if Audit is set) run it
// for an audit. The CLI's "risk rad", "risk calibrate" and "audit" loop
// over this table, so adding a mechanism is adding an entry to mechanisms.
type Mechanism struct {
	Name string // as on the command line: "laplace"
	Doc  string // a one-line description
	// Param is ParamEpsilon or ParamSigma: what the mechanism is given by
	// and what Calibrate returns. ParamDoc says what a σ means for it.
	Param, ParamDoc string
	// SigmaFor, if set, lets a σ-mechanism be given by (ε, δ) instead:
	// the Gaussian mechanism's analytic-Gaussian σ.
	SigmaFor func(eps, delta float64) (float64, error)
	// UsesSteps reports whether Params.Steps applies (DP-SGD).
	UsesSteps bool
	// RAD evaluates the mechanism's RAD at p (p.Epsilon or p.Sigma per
	// Param).
	RAD func(p Params) (RADResult, error)
	// Calibrate returns the largest ε (smallest σ) whose RAD under a
	// uniform prior on p.M values is at most risk; CalibrateBound cites the
	// formula it inverts.
	Calibrate      func(risk float64, p Params) (float64, error)
	CalibrateBound string
	// Audit, if set, builds the mechanism at the claimed p.Epsilon (and
	// p.Delta) with its randomness from src, the M secrets being query
	// values spread evenly over a unit range (numeric mechanisms: the
	// worst case of the RAD formulas) or the M categories.
	Audit func(p Params, src noise.Source) (AuditTarget, error)
}

// mechanisms is the table; its order is the order of help texts.
var mechanisms = []Mechanism{
	{
		Name: "laplace", Doc: "the ε-DP Laplace mechanism on a query of sensitivity 1",
		Param: ParamEpsilon,
		RAD: func(p Params) (RADResult, error) {
			rad, err := LaplaceUnitRange(p.Epsilon, p.M)
			tv := accountant.LaplaceTradeOff{Epsilon: p.Epsilon}.TV()
			return RADResult{RAD: rad, Bound: "Theorem 5.3, worst case over m values in a unit range (A.18)",
				TVBound: TVBound(tv, 1/float64(p.M))}, err
		},
		Calibrate:      func(r float64, p Params) (float64, error) { return CalibrateLaplace(r, p.M) },
		CalibrateBound: "A.18",
		Audit: func(p Params, src noise.Source) (AuditTarget, error) {
			lap := noise.Laplace{Epsilon: p.Epsilon, Sensitivity: 1, Src: src}
			if err := lap.Validate(); err != nil {
				return AuditTarget{}, err
			}
			values := unitRange(p.M)
			rad, err := LaplaceUnitRange(p.Epsilon, p.M)
			return AuditTarget{
				Sample:   func(x int, _ noise.Source) float64 { return lap.Add(values[x]) },
				Bayes:    nearestValue(p.M),
				ExactRAD: rad,
			}, err
		},
	},
	{
		Name: "gaussian", Doc: "the Gaussian mechanism on a query of sensitivity 1",
		Param: ParamSigma, ParamDoc: "Gaussian noise in units of the sensitivity",
		SigmaFor: func(eps, delta float64) (float64, error) { return accountant.GaussianSigma(eps, delta, 1) },
		RAD: func(p Params) (RADResult, error) {
			rad, err := GaussianUnitRange(p.Sigma, p.M)
			res := RADResult{RAD: rad, Bound: "Theorem 5.3, worst case over m values in a unit range (A.12)"}
			if err == nil {
				res.TVBound = TVBound(accountant.GaussianTradeOff{Mu: 1 / p.Sigma}.TV(), 1/float64(p.M))
			}
			return res, err
		},
		Calibrate:      func(r float64, p Params) (float64, error) { return CalibrateGaussian(r, p.M) },
		CalibrateBound: "A.12",
		Audit: func(p Params, src noise.Source) (AuditTarget, error) {
			sigma, err := accountant.GaussianSigma(p.Epsilon, p.Delta, 1)
			if err != nil {
				return AuditTarget{}, err
			}
			g := noise.Gaussian{Sigma: sigma, Src: src}
			if err := g.Validate(); err != nil {
				return AuditTarget{}, err
			}
			values := unitRange(p.M)
			rad, _ := GaussianUnitRange(sigma, p.M)
			return AuditTarget{
				Sample:   func(x int, _ noise.Source) float64 { return g.Add(values[x]) },
				Bayes:    nearestValue(p.M),
				ExactRAD: rad,
				Sigma:    sigma,
			}, nil
		},
	},
	{
		Name: "grr", Doc: "generalised randomised response over the m values",
		Param:          ParamEpsilon,
		RAD:            epsRAD(GRR, "Theorem 5.3 (Example 5.4)"),
		Calibrate:      func(r float64, p Params) (float64, error) { return CalibrateGRR(r, p.M) },
		CalibrateBound: "Example 5.4",
		Audit: func(p Params, _ noise.Source) (AuditTarget, error) {
			lik, err := GRRChannel(p.Epsilon, p.M)
			if err != nil {
				return AuditTarget{}, err
			}
			s, err := ChannelSampler(lik)
			if err != nil {
				return AuditTarget{}, err
			}
			rad, _ := GRR(p.Epsilon, p.M)
			// GRR's likelihood is largest at the reported value.
			return AuditTarget{Discrete: s, Bayes: func(t float64) int { return int(t) }, ExactRAD: rad}, nil
		},
	},
	{
		Name: "oue", Doc: "optimised unary encoding over the m values",
		Param:          ParamEpsilon,
		RAD:            epsRAD(OUE, "Theorem 5.3 (Example A.17)"),
		Calibrate:      func(r float64, p Params) (float64, error) { return CalibrateOUE(r, p.M) },
		CalibrateBound: "Example A.17 (bisection)",
	},
	{
		Name: "ss", Doc: "subset selection over the m values",
		Param:          ParamEpsilon,
		RAD:            epsRAD(SubsetSelection, "Theorem 5.3 (Example A.18)"),
		Calibrate:      func(r float64, p Params) (float64, error) { return CalibrateSubsetSelection(r, p.M) },
		CalibrateBound: "Example A.18 (bisection)",
	},
	{
		Name: "dpsgd", Doc: "full-batch DP-SGD, √Steps/σ-GDP",
		Param: ParamSigma, ParamDoc: "noise multiplier", UsesSteps: true,
		RAD: func(p Params) (RADResult, error) {
			rad, err := DPSGD(p.Sigma, p.Steps, p.M)
			res := RADResult{RAD: rad, Bound: fmt.Sprintf("Theorem 5.11 for full-batch DP-SGD, %d steps (Example 5.17)", p.Steps)}
			if err == nil {
				res.TVBound, err = DPSGDTV(p.Sigma, p.Steps, p.M)
			}
			return res, err
		},
		Calibrate:      func(r float64, p Params) (float64, error) { return CalibrateDPSGD(r, p.Steps, p.M) },
		CalibrateBound: "Theorem 5.11 (Example 5.17)",
	},
}

// epsRAD is the RAD of an ε-mechanism with a closed form, compared with
// Theorem 5.2 for any ε-DP mechanism.
func epsRAD(rad func(eps float64, m int) (float64, error), bound string) func(Params) (RADResult, error) {
	return func(p Params) (RADResult, error) {
		tv, err := EpsDeltaBound(p.Epsilon, 0, p.M)
		if err != nil {
			return RADResult{}, err
		}
		r, err := rad(p.Epsilon, p.M)
		return RADResult{RAD: r, Bound: bound, TVBound: tv}, err
	}
}

// unitRange returns m query values spread evenly over [0, 1].
func unitRange(m int) []float64 {
	v := make([]float64, m)
	for i := range v {
		v[i] = float64(i) / float64(m-1)
	}
	return v
}

// nearestValue is the MAP attack for symmetric unimodal noise on unitRange
// values under a uniform prior: the nearest value.
func nearestValue(m int) func(float64) int {
	return func(t float64) int {
		i := int(math.Round(t * float64(m-1)))
		return min(max(i, 0), m-1)
	}
}

// Mechanisms returns the table of mechanisms, in the order of help texts.
func Mechanisms() []Mechanism { return append([]Mechanism(nil), mechanisms...) }

// Auditable returns the mechanisms that tracepriv implements and so can
// audit (Audit set).
func Auditable() []Mechanism {
	var a []Mechanism
	for _, m := range mechanisms {
		if m.Audit != nil {
			a = append(a, m)
		}
	}
	return a
}

// JoinNames joins the names of table with sep, and last before the last
// one: "a, b or c".
func JoinNames(table []Mechanism, sep, last string) string {
	var b strings.Builder
	for i, m := range table {
		switch {
		case i == 0:
		case i == len(table)-1:
			b.WriteString(last)
		default:
			b.WriteString(sep)
		}
		b.WriteString(m.Name)
	}
	return b.String()
}

// LookupMechanism returns the table entry named name.
func LookupMechanism(name string) (Mechanism, bool) {
	for _, m := range mechanisms {
		if m.Name == name {
			return m, true
		}
	}
	return Mechanism{}, false
}

// Audit runs an audit of t with attack "bayes" (t's Bayes attack, which
// uses the mechanism's likelihood, Algorithm 1) or "learned" (a histogram
// or count attack fitted on training runs, which knows nothing about the
// mechanism: Continuous or Discrete).
func (a Auditor) Audit(t AuditTarget, attack string) (AuditResult, error) {
	switch attack {
	case "bayes":
		s := t.Sample
		if t.Discrete != nil {
			d := t.Discrete
			s = func(x int, src noise.Source) float64 { return float64(d(x, src)) }
		}
		res, err := a.Attack(s, t.Bayes)
		res.Attack = "bayes"
		return res, err
	case "learned":
		if t.Discrete != nil {
			return a.Discrete(t.Discrete)
		}
		return a.Continuous(t.Sample)
	}
	return AuditResult{}, errorf("unknown attack %q (want bayes or learned)", attack)
}

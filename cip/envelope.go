package cip

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sdp"
)

// Envelope is a stationary noise kernel k_D whose spectral density
// dominates that of every unit-variance member of a prior family:
//
//	sum_j Weight_j S_j(w) >= s_l(w)   for every w >= 0 and l in [l_min, l_max].
//
// By Bochner's theorem k_D - k_l is then a kernel, so at any timestamps
// Gram(k_D) >= Gram(k_l) in the PSD order; noise SigmaG = alpha Gram(k_D)
// therefore dominates (alpha / sigma^2) Sigma_l for a member of any variance
// sigma^2, and (E1) is monotone in the noise, so the loss of a secret S
// under every member is at most
//
//	lambda_max(R_l[S,S]^-1) / alpha <= 1 / (alpha mu_S),
//
// with R_l the unit-variance Gram matrix and mu_S a certified lower bound on
// its smallest eigenvalue over the family (FamilyMinEigen; 1 for a basic
// secret). Equality holds for SigmaG proportional to Sigma_l, so for a
// single-lengthscale family with proportional noise the bound is exact.
//
// The components are Matérn kernels with half-integer smoothness on a
// geometric grid of lengthscales, weighted by a linear program, so that the
// noise has a state-space form (a linear-time sampler can draw it). The
// domination is then verified, not assumed: on a fine logarithmic grid of
// frequencies w_0 < w_1 < ... both densities decrease, so D(w_{i+1}) >=
// E(w_i) proves D >= E on [w_i, w_{i+1}]; D(w_0) >= E(0) covers [0, w_0];
// beyond the grid an analytic argument shows that the ratio of the family's
// envelope to one heavier-tailed component decreases (EnvelopeCheck). The
// weights are scaled up until every inequality holds, with a relative
// margin for rounding in the density evaluations.
type Envelope struct {
	Family prior.FamilySet
	// Components are the noise kernels; each one's Variance is its weight
	// (unit-variance kernel times weight).
	Components []gp.Kernel
	// Overhead is the noise variance per point relative to proportional
	// noise for one member, sum of the weights: >= 1, and 1 exactly when
	// Proportional.
	Overhead float64
	// Proportional is true when the noise kernel is the family's single
	// member itself (no grid: the domination is an identity).
	Proportional bool
	// MemberScales, aligned with Family.Kernels, are the factors c_k by
	// which the noise density dominates each kernel's members (1, or its
	// PlaceNorm with EnvelopeOptions.PlaceScaled); nil means all 1.
	MemberScales []float64
	// Check records how the domination was verified.
	Check EnvelopeCheck
}

// EnvelopeCheck is the verification record of an Envelope.
type EnvelopeCheck struct {
	// OmegaMin and OmegaMax bound the frequency grid checked (radians per
	// second), with GridPoints points at a constant ratio.
	OmegaMin   float64 `json:"omega_min"`
	OmegaMax   float64 `json:"omega_max"`
	GridPoints int     `json:"grid_points"`
	// TailFrom is the frequency beyond which the analytic argument holds,
	// for the component named TailComponent.
	TailFrom      float64 `json:"tail_from"`
	TailComponent string  `json:"tail_component"`
	// Scale is the factor by which the linear program's weights were
	// multiplied so that every check passes (including the margin).
	Scale float64 `json:"scale"`
}

// EnvelopeOptions tunes NewEnvelope. The zero value is the default.
type EnvelopeOptions struct {
	// StateSpace restricts the noise to Matérn components even for a
	// single-lengthscale family (which otherwise gets proportional noise,
	// the exact optimum for every point a basic secret).
	StateSpace bool
	// PlaceScaled makes the noise dominate PlaceNorm(kernel, 1) times
	// every member of each kernel that has a place bound (Matérn 1/2, 3/2,
	// 5/2; 1 for the others): noise alpha k_D then certifies every window
	// moved rigidly against every member at least as long as it at the
	// same loss factor 1/alpha as a basic secret (see PlaceFactor), at
	// less cost than scaling the whole envelope by the largest PlaceNorm.
	PlaceScaled bool
}

// envelopeMargin is the relative margin on the verified inequalities: far
// above the rounding of the density evaluations (a few ulps), far below
// anything a user would notice in the noise.
const envelopeMargin = 1e-9

// NewEnvelope returns a noise kernel dominating every member of the family
// (see Envelope). Families of the RBF and Matérn 3/2 and 5/2 kernels are
// supported over a lengthscale range; a periodic family only with a single
// lengthscale (its spectrum is a set of lines, which no finite mixture of
// other kernels dominates).
//
// Envelopes are cached by family and options (the design takes about 0.1 s
// and depends on nothing else); the returned value must not be modified.
func NewEnvelope(f prior.FamilySet, opt *EnvelopeOptions) (*Envelope, error) {
	var o EnvelopeOptions
	if opt != nil {
		o = *opt
	}
	key := envelopeKey{f.Key(), o}
	envelopeCache.Lock()
	e, ok := envelopeCache.m[key]
	envelopeCache.Unlock()
	if ok {
		return e, nil
	}
	e, err := newEnvelope(f, &o)
	if err != nil {
		return nil, err
	}
	cacheEnvelope(key, e)
	return e, nil
}

// cacheEnvelope keeps e under key (the cache holds at most 64 envelopes).
func cacheEnvelope(key envelopeKey, e *Envelope) {
	envelopeCache.Lock()
	if len(envelopeCache.m) > 64 {
		clear(envelopeCache.m)
	}
	envelopeCache.m[key] = e
	envelopeCache.Unlock()
}

type envelopeKey struct {
	f string
	o EnvelopeOptions
}

var envelopeCache = struct {
	sync.Mutex
	m map[envelopeKey]*Envelope
}{m: map[envelopeKey]*Envelope{}}

func newEnvelope(f prior.FamilySet, opt *EnvelopeOptions) (*Envelope, error) {
	if err := f.Validate(); err != nil {
		return nil, param.Wrap("family", "", err)
	}
	if f.Single() && !opt.StateSpace {
		member, err := f.Kernels[0].Member(1, f.Kernels[0].LengthscaleMin)
		if err != nil {
			return nil, err
		}
		return &Envelope{Family: f, Components: []gp.Kernel{member}, Overhead: 1, Proportional: true, Check: EnvelopeCheck{Scale: 1}}, nil
	}
	e, err := newEnvelopeLP(f, opt)
	if err != nil {
		return nil, err
	}
	w, err := e.solve()
	if err != nil {
		return nil, err
	}
	env, err := e.verify(w)
	if err != nil {
		return nil, err
	}
	for _, m := range e.members {
		env.MemberScales = append(env.MemberScales, m.scale)
	}
	return env, nil
}

// newEnvelopeLP sets up the design problem of a family with more than one
// lengthscale (or opt.StateSpace): its members and its dictionary.
func newEnvelopeLP(f prior.FamilySet, opt *EnvelopeOptions) (*envelopeLP, error) {
	e := &envelopeLP{f: f, nuMin: math.Inf(1)}
	e.a, e.b = f.LengthscaleRange()
	for _, kf := range f.Kernels {
		member, err := kf.Member(1, kf.LengthscaleMin)
		if err != nil {
			return nil, err
		}
		if _, ok := member.(gp.Spectral); !ok {
			return nil, param.Invalid("family", kf.Kernel, "needs a single lengthscale and no other kernel (no spectral envelope for it; set lengthscale_min_s = lengthscale_max_s)")
		}
		nuF, _ := gp.Smoothness(member)
		if nuF < 0.5 {
			return nil, param.Invalid("family", kf.Kernel, "has no envelope: no Matérn kernel has a heavier spectral tail")
		}
		m := envelopeMember{f: kf, nuF: nuF, a: kf.LengthscaleMin, b: kf.LengthscaleMax, scale: 1}
		if pn, ok := PlaceNorm(kf.Kernel, 1); ok && opt.PlaceScaled {
			m.scale = pn * (1 + 1e-12)
		}
		e.members = append(e.members, m)
		e.nuMin = math.Min(e.nuMin, nuF)
	}
	if err := e.dictionary(); err != nil {
		return nil, err
	}
	return e, nil
}

// envelopeLP holds the design problem of NewEnvelope.
type envelopeLP struct {
	f       prior.FamilySet
	members []envelopeMember
	nuMin   float64 // the least smoothness of the family's kernels (Inf for RBF)
	a, b    float64 // lengthscale range over every kernel
	dict    []gp.Spectral
	nuDict  []float64
}

// envelopeMember is one kernel family of the set.
type envelopeMember struct {
	f     prior.Family
	nuF   float64 // smoothness (Inf for RBF)
	a, b  float64 // lengthscale range
	scale float64 // the envelope dominates scale times each member
}

// logEnv returns log E(w), E(w) = sup over the family's kernels and their
// lengthscales l of s_l(w). For the RBF and Matérn kernels the maximiser
// over l in [a, b] is l = 1/w clamped to [a, b]: l exp(-l^2 w^2/2) peaks at
// l w = 1, and lam^(2 nu) (lam^2 + w^2)^-(nu+1/2) (lam = sqrt(2 nu)/l) at
// lam^2 = 2 nu w^2, again l w = 1; both are unimodal in l.
func (e *envelopeLP) logEnv(w float64) float64 {
	out := math.Inf(-1)
	for _, m := range e.members {
		out = math.Max(out, m.logEnv(w))
	}
	return out
}

func (m envelopeMember) logEnv(w float64) float64 {
	l := m.b
	if w > 0 {
		l = math.Min(math.Max(1/w, m.a), m.b)
	}
	k, _ := m.f.Member(1, l)
	v := k.(gp.Spectral).LogSpectralDensity(w)
	if m.scale > 0 && m.scale != 1 {
		v += math.Log(m.scale)
	}
	return v
}

// dictionary lays out the candidate components: every Matérn smoothness up
// to the family's smoothest kernel's and at least 3/2, lengthscales on a
// grid from a/8 to 8b at ratio 2^(1/4). A heavier tail than the family's
// comes from the lowest smoothness; smoother components fit the envelope's
// knees: for a family with Matérn 1/2 members, Matérn 3/2 components lower
// the overhead by 6 %, and for one with Matérn 5/2 members too (the
// bundled family) Matérn 5/2 components by 0.3 % more (7.984 against 8.006
// with PlaceScaled), for 3 states each instead of 2.
func (e *envelopeLP) dictionary() error {
	nuMax := 1.5
	for _, m := range e.members {
		nuMax = math.Max(nuMax, m.nuF)
	}
	for _, nu := range []float64{0.5, 1.5, 2.5, 3.5} {
		if nu > nuMax || (math.IsInf(e.nuMin, 1) && nu < 1) {
			continue
		}
		top := e.b
		if nu > e.nuMin {
			top = 0
			for _, m := range e.members {
				if m.nuF >= nu {
					top = math.Max(top, m.b)
				}
			}
		}
		for l := e.a / 8; l <= 8*top*(1+1e-12); l *= math.Pow(2, dictStep) {
			var k gp.Spectral
			switch nu {
			case 0.5:
				k = gp.Matern12{Variance: 1, Lengthscale: l}
			case 1.5:
				k = gp.Matern32{Variance: 1, Lengthscale: l}
			case 2.5:
				k = gp.Matern52{Variance: 1, Lengthscale: l}
			default:
				k = gp.Matern72{Variance: 1, Lengthscale: l}
			}
			e.dict = append(e.dict, k)
			e.nuDict = append(e.nuDict, nu)
		}
	}
	if len(e.dict) == 0 {
		return errors.New("empty envelope dictionary")
	}
	return nil
}

// tailFrom returns the frequency beyond which E / S_j decreases, for a
// component of smoothness nu below every kernel's, at any lengthscale: the
// largest over the kernels of their own points (E is the maximum of the
// kernels' envelopes E_k, and a maximum of decreasing functions
// decreases). For an RBF family on [a, b], d log(E_k/S_j)/dw <= -a^2 w +
// (2 nu + 1)/w; for a Matérn family of smoothness nuF, <= -(2 nuF + 1)
// w/(lam_a^2 + w^2) + (2 nu + 1)/w, with lam_a = sqrt(2 nuF)/a. Both are
// negative beyond the returned point, which is also beyond 1/a, where E_k
// is the member at a.
func (e *envelopeLP) tailFrom(nu float64) float64 {
	out := 0.0
	for _, m := range e.members {
		var wc float64
		if m.nuF == nu {
			// A Matérn 1/2 family and a Matérn 1/2 component of
			// lengthscale at most a (heavyOK): E_k/S_j = (l_j/a)(1/l_j^2 +
			// w^2)/(1/a^2 + w^2) beyond 1/a, decreasing since 1/l_j >= 1/a.
			out = math.Max(out, 1/m.a)
			continue
		}
		if math.IsInf(m.nuF, 1) {
			wc = math.Sqrt(2*nu+1) / m.a
		} else {
			lam := math.Sqrt(2*m.nuF) / m.a
			wc = lam * math.Sqrt((2*nu+1)/(2*(m.nuF-nu)))
		}
		out = math.Max(out, math.Max(wc, 1/m.a))
	}
	return out
}

// heavyOK reports whether a component of smoothness nu and lengthscale l
// can carry the tail argument: a strictly heavier tail than every kernel
// of the family, or, for a family of Matérn 1/2 kernels, a Matérn 1/2 of
// lengthscale at most the family's least (see tailFrom).
func (e *envelopeLP) heavyOK(nu, l float64) bool {
	if nu < e.nuMin {
		return true
	}
	return nu == 0.5 && e.nuMin == 0.5 && l <= e.a
}

// grid returns frequencies from w0 to w1 at log step h.
func grid(w0, w1, h float64) []float64 {
	n := int(math.Ceil(math.Log(w1/w0)/h)) + 1
	out := make([]float64, n)
	for i := range out {
		out[i] = w0 * math.Exp(float64(i)*h)
	}
	return out
}

// omegaRange is the frequency range the LP and the verification cover.
func (e *envelopeLP) omegaRange() (float64, float64) {
	hi := 40 / e.a
	for _, nu := range e.nuDict {
		if nu < e.nuMin || nu == 0.5 {
			hi = math.Max(hi, 2*e.tailFrom(nu))
		}
	}
	return 1e-3 / e.b, hi
}

// solve minimises the sum of the weights subject to D(w_k) >= E(w_k) on a
// coarse grid (rows scaled by E so the LP is well conditioned) and
// D(w_0) >= E(0), with the project's interior-point solver (package sdp,
// linear rows only). The solution need not be exact: verify proves
// domination and scales.
func (e *envelopeLP) solve() ([]float64, error) {
	lo, hi := e.omegaRange()
	ws := grid(lo, hi, lpStep)
	m := sdp.NewModel()
	vars := make([]sdp.Var, len(e.dict))
	terms := make([]sdp.LinExpr, 0, len(e.dict))
	for j := range e.dict {
		vars[j] = m.ScalarVar()
		m.Geq(vars[j].Expr(), sdp.Const(0))
		terms = append(terms, vars[j].Expr())
	}
	total := sumExprs(terms)
	row := func(w, logE float64) {
		terms = terms[:0]
		for j, k := range e.dict {
			// Dropping a tiny coefficient or capping a large one makes the
			// constraint stricter: safe, and better conditioned.
			if r := math.Exp(k.LogSpectralDensity(w) - logE); r > 1e-9 {
				terms = append(terms, vars[j].Expr().Scale(math.Min(r, 1e6)))
			}
		}
		m.Geq(sumExprs(terms), sdp.Const(1))
	}
	row(lo, e.logEnv(0))
	for _, w := range ws {
		row(w, e.logEnv(w))
	}
	m.Minimize(total)
	sol, err := m.Solve(nil)
	if err != nil {
		return nil, fmt.Errorf("envelope linear program: %w", err)
	}
	if sol.Status != sdp.Optimal && sol.Status != sdp.NearOptimal {
		return nil, fmt.Errorf("envelope linear program: %w (status %v)", ErrSolverStatus, sol.Status)
	}
	x := make([]float64, len(vars))
	for j, v := range vars {
		x[j] = math.Max(sol.Value(v), 0)
	}
	return x, nil
}

// sumExprs returns es[0] + es[1] + ..., the terms in the same order as a
// left-to-right sum (the same model: the rows' constants are zero), in
// halves: a left-to-right sum
// copies its growing prefix at every step, quadratic in the dictionary
// (a fifth of the design's time).
func sumExprs(es []sdp.LinExpr) sdp.LinExpr {
	switch len(es) {
	case 0:
		return sdp.LinExpr{}
	case 1:
		return sdp.LinExpr{}.Plus(es[0])
	}
	h := len(es) / 2
	return sumExprs(es[:h]).Plus(sumExprs(es[h:]))
}

// verify checks the domination on a fine grid and in the tail, scaling the
// weights until it holds, and returns the envelope.
func (e *envelopeLP) verify(x []float64) (*Envelope, error) {
	var comps []gp.Spectral
	var wts, nus []float64
	// Interior-point solutions spread dust over every component; dropping
	// it lowers D, which the scaling below then pays for.
	cut := 1e-6 * slices.Max(x)
	for j, v := range x {
		if v > cut {
			comps, wts, nus = append(comps, e.dict[j]), append(wts, v), append(nus, e.nuDict[j])
		}
	}
	// A Matérn family needs a strictly heavier tail than its own for the
	// analytic tail argument; add the heaviest, shortest component with a
	// weight of zero for now (the tail check sizes it).
	heavy := -1
	for j, nu := range nus {
		if e.heavyOK(nu, lengthscaleOf(comps[j])) && (heavy < 0 || nu < nus[heavy]) {
			heavy = j
		}
	}
	if heavy < 0 {
		for j, nu := range e.nuDict {
			if e.heavyOK(nu, lengthscaleOf(e.dict[j])) && (heavy < 0 || nu < e.nuDict[heavy]) {
				heavy = j // the first of the lowest smoothness: the shortest lengthscale
			}
		}
		if heavy < 0 {
			return nil, errors.New("envelope: no component with a heavier tail than the family")
		}
		comps, wts, nus = append(comps, e.dict[heavy]), append(wts, 0), append(nus, e.nuDict[heavy])
		heavy = len(comps) - 1
	}
	logD := func(w float64) float64 {
		// log sum_j wts_j S_j(w), stably.
		mx := math.Inf(-1)
		ls := make([]float64, len(comps))
		for j, k := range comps {
			if wts[j] > 0 {
				ls[j] = math.Log(wts[j]) + k.LogSpectralDensity(w)
				mx = math.Max(mx, ls[j])
			}
		}
		s := 0.0
		for j := range comps {
			if wts[j] > 0 {
				s += math.Exp(ls[j] - mx)
			}
		}
		return mx + math.Log(s)
	}
	lo, hi := e.omegaRange()
	ws := grid(lo, hi, verifyStep)
	worst, points := e.worstRatio(ws, logD)
	scale := math.Exp(worst) * (1 + envelopeMargin)
	for j := range wts {
		wts[j] *= scale
	}
	// Tail: E/(w_h S_h) <= 1 at the last grid point, and decreasing beyond.
	wN := ws[len(ws)-1]
	from := e.tailFrom(nus[heavy])
	if wN < from {
		return nil, fmt.Errorf("envelope: grid ends at %g below the tail bound %g", wN, from)
	}
	need := math.Exp(e.logEnv(wN)-comps[heavy].LogSpectralDensity(wN)) * (1 + envelopeMargin)
	if wts[heavy] < need {
		wts[heavy] = need
	}
	env := &Envelope{Family: e.f, Check: EnvelopeCheck{OmegaMin: lo, OmegaMax: wN, GridPoints: points, TailFrom: from, Scale: scale}}
	order := make([]int, len(comps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		ki, kj := comps[order[i]], comps[order[j]]
		if nus[order[i]] != nus[order[j]] {
			return nus[order[i]] < nus[order[j]]
		}
		return lengthscaleOf(ki) < lengthscaleOf(kj)
	})
	for _, j := range order {
		// Rounded up to 16 significant bits: the noise only grows, so it
		// still dominates, and the design no longer carries the last-ulp
		// differences of math.Exp/Log between platforms (amd64's assembly,
		// WebAssembly's pure Go) that the linear program amplifies to 1e-9:
		// a seeded release on the device is then the library's, byte for
		// byte (issue 33), at a cost below 2e-5 of the variance.
		wts[j] = roundUpBits(wts[j], 16)
		k, err := gp.NewKernel(gp.KernelName(comps[j]), wts[j], lengthscaleOf(comps[j]), 0)
		if err != nil {
			return nil, err
		}
		env.Components = append(env.Components, k)
		env.Overhead += wts[j]
		if j == heavy {
			env.Check.TailComponent = fmt.Sprintf("%s, lengthscale %.4g s", gp.KernelName(k), lengthscaleOf(k))
		}
	}
	return env, nil
}

// roundUpBits returns the least number with bits significant bits at or
// above x > 0 (x itself when it has no more).
func roundUpBits(x float64, bits int) float64 {
	m, e := math.Frexp(x) // x = m 2^e, m in [0.5, 1)
	return math.Ldexp(math.Ceil(math.Ldexp(m, bits)), e-bits)
}

// worstRatio returns the largest log(E/D) the bracketing checks allow on
// [0, ws[0]] and on each [ws[i], ws[i+1]] (both densities decrease, so
// E(w)/D(w) <= E(w_i)/D(w_{i+1}) there), and how many frequencies it
// evaluated. A bracket costs up to its log width times the densities'
// log slope (0.2-0.4 % of the scale at the grid's step), so a bracket
// whose bound exceeds the largest ratio met at a point (which the result
// cannot undercut: every point starts a bracket) is split in
// verifyRefine, down to verifyFinest: the same proof, on a grid as fine
// as the full grid at verifyFinest where the bound binds, at a fraction
// of its cost.
func (e *envelopeLP) worstRatio(ws []float64, logD func(float64) float64) (float64, int) {
	logE := make([]float64, len(ws))
	logDs := make([]float64, len(ws))
	floor := math.Inf(-1)
	for i, w := range ws {
		logE[i], logDs[i] = e.logEnv(w), logD(w)
		floor = math.Max(floor, logE[i]-logDs[i])
	}
	points := len(ws)
	worst := e.logEnv(0) - logDs[0]
	var bracket func(w0, w1, lE0, lD1, h float64) float64
	bracket = func(w0, w1, lE0, lD1, h float64) float64 {
		r := lE0 - lD1
		if r <= floor || h <= verifyFinest*(1+1e-9) {
			return r
		}
		h /= verifyRefine
		out := math.Inf(-1)
		a, lEa := w0, lE0
		for j := 1; j <= verifyRefine; j++ {
			b := w0 * math.Exp(float64(j)*h)
			lDb := lD1
			lEb := 0.0
			if j < verifyRefine {
				lEb, lDb = e.logEnv(b), logD(b)
				points++
				floor = math.Max(floor, lEb-lDb)
			} else {
				b = w1
			}
			out = math.Max(out, bracket(a, b, lEa, lDb, h))
			a, lEa = b, lEb
		}
		return out
	}
	for i := 0; i+1 < len(ws); i++ {
		worst = math.Max(worst, bracket(ws[i], ws[i+1], logE[i], logDs[i+1], verifyStep))
	}
	return worst, points
}

// lengthscaleOf reads the "lengthscale" hyperparameter of k.
func lengthscaleOf(k gp.Kernel) float64 {
	for _, p := range k.Params() {
		if p.Name == "lengthscale" {
			return p.Value
		}
	}
	return math.NaN()
}

// Kernel returns the noise kernel alpha k_D, the sum of ScaledComponents.
func (e *Envelope) Kernel(alpha float64) gp.Kernel {
	var out gp.Kernel
	for _, k := range e.ScaledComponents(alpha) {
		if out == nil {
			out = k
		} else {
			out = gp.Sum{K1: out, K2: k}
		}
	}
	return out
}

// Density returns the envelope's noise density D(w) (weights included).
func (e *Envelope) Density(w float64) float64 {
	s := 0.0
	for _, c := range e.Components {
		if sp, ok := c.(gp.Spectral); ok {
			s += sp.SpectralDensity(w)
		}
	}
	return s
}

// FamilyMinEigen returns a certified lower bound on the smallest eigenvalue
// of R_l[S,S], the unit-variance Gram matrix of the family's member at
// lengthscale l at the secret's times ts, over every l in the family. For
// one time it is 1.
//
// For the RBF and Matérn kernels, s_l(w) >= (l/l') s_l'(w) at every
// frequency when l <= l' (the ratio of the densities increases with w from
// l/l' at w = 0), so R_l >= (l/l') R_l' in the PSD order and
// lambda_min(R_l) >= (l/l') lambda_min(R_l'). On a geometric grid of ratio
// rho = 1.001 ending at l_max, every l is within a factor rho below a grid
// point, hence the bound min_k lambda_min(R_{l_k}) / rho. For the RBF the
// minimum is at l_max itself: R_l = R_l' o Q with Q the (PSD, unit
// diagonal) RBF Gram matrix of lengthscale (1/l^2 - 1/l'^2)^(-1/2), and
// Schur's product inequality gives lambda_min(R_l) >= lambda_min(R_l').
func FamilyMinEigen(fs prior.FamilySet, ts []float64) (float64, error) {
	if len(fs.Kernels) == 0 {
		return 0, param.Invalid("family", "[]", "the prior family is empty")
	}
	out := math.Inf(1)
	for _, f := range fs.Kernels {
		v, err := familyMinEigen(f, ts)
		if err != nil {
			return 0, err
		}
		out = math.Min(out, v)
	}
	return out, nil
}

// familyMinEigen is FamilyMinEigen for one kernel family.
func familyMinEigen(f prior.Family, ts []float64) (float64, error) {
	k := len(ts)
	if k == 0 {
		return 0, param.Invalid("secret", "[]", "the secret is empty")
	}
	if k == 1 {
		return 1, nil
	}
	minEig := func(l float64) (float64, error) {
		kern, err := f.Member(1, l)
		if err != nil {
			return 0, err
		}
		lo, _, err := eigExtremes(gp.Gram(kern, ts))
		// eigExtremes is accurate to a few ulps of the largest eigenvalue
		// (<= k for a correlation matrix).
		return lo - 1e-13*float64(k), err
	}
	var bound float64
	switch {
	case f.Single() || f.Kernel == gp.KernelRBF:
		v, err := minEig(f.LengthscaleMax)
		if err != nil {
			return 0, err
		}
		bound = v
	case f.Kernel == gp.KernelMatern12 || f.Kernel == gp.KernelMatern32 || f.Kernel == gp.KernelMatern52 || f.Kernel == gp.KernelMatern72:
		const rho = 1.001
		bound = math.Inf(1)
		steps := int(math.Ceil(math.Log(f.LengthscaleMax/f.LengthscaleMin) / math.Log(rho)))
		for i := steps; i >= 0; i-- {
			v, err := minEig(f.LengthscaleMax / math.Pow(rho, float64(i)))
			if err != nil {
				return 0, err
			}
			bound = math.Min(bound, v/rho)
		}
	default:
		return 0, param.Invalid("family", f.Kernel, "has no eigenvalue bound over a lengthscale range")
	}
	if !(bound > 0) {
		return 0, param.Invalid("secret", fmt.Sprint(ts), fmt.Sprintf("a member of the family %v makes its points linearly dependent (smallest eigenvalue %g); no noise can hide independent displacements of them", f, bound))
	}
	return bound, nil
}

// FamilyDesign is envelope noise for one trace, certified against a prior
// family for a list of secrets.
type FamilyDesign struct {
	Envelope *Envelope
	// Alpha scales the envelope: SigmaG = Alpha Gram(k_D), in square units
	// of the trace (metres^2).
	Alpha float64
	// MinEigen are the certified lower bounds mu_S of FamilyMinEigen, and
	// Bounds the certified loss factors 1/(Alpha mu_S), per secret.
	MinEigen, Bounds []float64
	// Exact is true when the bounds are attained (proportional noise for a
	// single-lengthscale family, basic secrets): the certificate is then
	// the exact worst case, not only an upper bound.
	Exact bool
}

// DesignFamily returns the least multiple alpha of the envelope noise that
// keeps every secret's loss factor within its target under every member of
// the family: alpha = max_S 1/(t_S mu_S). ts are the trace's timestamps.
func DesignFamily(env *Envelope, ts []float64, secrets []Secret, targets []float64) (*FamilyDesign, error) {
	if len(secrets) != len(targets) {
		return nil, param.Invalid("targets", len(targets), fmt.Sprintf("must be one per secret (%d)", len(secrets)))
	}
	if len(secrets) == 0 {
		return nil, param.Invalid("secrets", "[]", "no secrets")
	}
	d := &FamilyDesign{Envelope: env, MinEigen: make([]float64, len(secrets)), Bounds: make([]float64, len(secrets))}
	cache := map[string]float64{}
	exact := env.Proportional
	for i, s := range secrets {
		if err := s.Validate(len(ts)); err != nil {
			return nil, err
		}
		if !(targets[i] > 0) || math.IsInf(targets[i], 0) {
			return nil, param.Positive(fmt.Sprintf("targets[%d]", i), targets[i])
		}
		mu := 1.0 // a basic secret: R_l[S,S] = 1
		if len(s.Indices) > 1 {
			st := make([]float64, len(s.Indices))
			for j, p := range s.Indices {
				st[j] = ts[p]
			}
			slices.Sort(st)
			// Secrets with the same time differences have the same bound
			// (stationarity): cache by the differences.
			key := fmt.Sprint(diffs(st))
			var ok bool
			if mu, ok = cache[key]; !ok {
				var err error
				if mu, err = FamilyMinEigen(env.Family, st); err != nil {
					return nil, err
				}
				cache[key] = mu
			}
		}
		d.MinEigen[i] = mu
		d.Alpha = math.Max(d.Alpha, 1/(targets[i]*mu))
		if len(s.Indices) > 1 {
			exact = false
		}
	}
	for i, mu := range d.MinEigen {
		d.Bounds[i] = 1 / (d.Alpha * mu)
	}
	d.Exact = exact
	return d, nil
}

func diffs(t []float64) []float64 {
	out := make([]float64, len(t)-1)
	for i := range out {
		out[i] = t[i+1] - t[i]
	}
	return out
}

// SigmaG returns the dense noise covariance Alpha Gram(k_D) at ts.
func (d *FamilyDesign) SigmaG(ts []float64) *mat.SymDense {
	return gp.Gram(d.Envelope.Kernel(d.Alpha), ts)
}

// IdealOverhead returns the least overhead any stationary noise dominating
// the family could have: the family's own envelope E(w) = sup_l s_l(w) used
// as a noise density, integral of E over integral of s_l (by quadrature).
// For the RBF it is 1 + ln(l_max/l_min) sqrt(2 pi) e^(-1/2) / pi. An
// Envelope's Overhead is measured against it.
func IdealOverhead(f prior.FamilySet) (float64, error) {
	if err := f.Validate(); err != nil {
		return 0, err
	}
	if f.Single() {
		return 1, nil
	}
	e := &envelopeLP{f: f}
	for _, kf := range f.Kernels {
		member, err := kf.Member(1, kf.LengthscaleMin)
		if err != nil {
			return 0, err
		}
		nu, ok := gp.Smoothness(member)
		if !ok {
			return 0, param.Invalid("family", kf.Kernel, "has no spectral envelope")
		}
		e.members = append(e.members, envelopeMember{f: kf, nuF: nu, a: kf.LengthscaleMin, b: kf.LengthscaleMax})
	}
	a, _ := f.LengthscaleRange()
	g := func(u float64) float64 {
		w := u / (1 - u) / a
		return math.Exp(e.logEnv(w)) / ((1 - u) * (1 - u)) / a
	}
	s := 0.0
	for _, iv := range [][2]float64{{0, 0.5}, {0.5, 0.9}, {0.9, 0.99}, {0.99, 0.9999}, {0.9999, 1 - 1e-12}} {
		s += quad.Fixed(g, iv[0], iv[1], 4000, nil, 0)
	}
	return s / math.Pi, nil
}

// dictStep is the log2 ratio of consecutive lengthscales of the envelope's
// candidate components (a finer grid, 1/8 or 1/16, lowered the overhead
// of a three-kernel family by under 0.1 %).
const dictStep = 0.25

// verifyStep is the log step of the verification's frequency grid, and
// verifyRefine and verifyFinest how a bracket whose bound binds is split
// (worstRatio): by 10, down to a log width of 1e-5, where a bracket costs
// at most 0.004 % of the scale (0.2 % at 1e-3 without the splitting,
// 0.24 % of the bundled family's RMS noise).
const (
	verifyStep   = 1e-3
	verifyRefine = 10
	verifyFinest = 1e-5
)

// lpStep is the log step of the linear program's frequency grid (0.02 or
// 0.01 changed the verified overhead by under 0.05 %).
const lpStep = 0.05

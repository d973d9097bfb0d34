package sdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/infile"
)

// Status is the outcome of a solve.
type Status int

const (
	// Optimal: primal and dual residuals and the relative gap are within
	// the tolerances.
	Optimal Status = iota
	// NearOptimal: the iteration stopped (step too short or numerical
	// failure) at a point within 1e3 times the tolerances.
	NearOptimal
	// PrimalInfeasible: a dual ray (Farkas certificate) was found; see
	// Result.Y, Result.Z.
	PrimalInfeasible
	// DualInfeasible: a primal ray was found along which the objective is
	// unbounded below; see Result.X, Result.S.
	DualInfeasible
	// MaxIterations: the iteration limit was reached first.
	MaxIterations
	// NumericalProblems: the iteration broke down far from a solution.
	NumericalProblems
)

var statusNames = [...]string{"optimal", "near_optimal", "primal_infeasible", "dual_infeasible", "max_iterations", "numerical_problems"}

func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("Status(%d)", int(s))
	}
	return statusNames[s]
}

// MarshalText encodes the status as its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a status from its name, as MarshalText writes it.
func (s *Status) UnmarshalText(b []byte) error {
	for i, name := range statusNames {
		if string(b) == name {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown SDP status %s", infile.Excerpt(b))
}

// Settings tune the solver. The zero value is replaced by DefaultSettings.
type Settings struct {
	MaxIter int     // iteration limit (default 100)
	FeasTol float64 // relative primal/dual residual tolerance (default 1e-8)
	GapTol  float64 // relative duality gap (default 1e-8)
	Step    float64 // fraction of the distance to the boundary (default 0.99)
	// Trace, if set, is called once per iteration with the residuals at
	// its start and the step length it then took.
	Trace func(Iteration)
	// Context, if set, is checked once per iteration, before its Newton
	// system is factorised: once it ends, Solve returns its error
	// (context.Canceled or context.DeadlineExceeded) and no result.
	Context context.Context
}

// Iteration is the progress report passed to Settings.Trace.
type Iteration struct {
	Iter                    int
	PrimalObj, DualObj      float64
	Gap, PrimalRes, DualRes float64
	Step                    float64
}

// DefaultSettings returns the default settings.
func DefaultSettings() Settings {
	return Settings{MaxIter: 100, FeasTol: 1e-8, GapTol: 1e-8, Step: 0.99}
}

func (s *Settings) fill() Settings {
	d := DefaultSettings()
	if s == nil {
		return d
	}
	out := *s
	if out.MaxIter <= 0 {
		out.MaxIter = d.MaxIter
	}
	if out.FeasTol <= 0 {
		out.FeasTol = d.FeasTol
	}
	if out.GapTol <= 0 {
		out.GapTol = d.GapTol
	}
	if out.Step <= 0 || out.Step >= 1 {
		out.Step = d.Step
	}
	return out
}

// Result is the solution of a Problem. X is the primal variable, S the
// slack F0 + sum x_j F_j (LP rows in SLP, blocks in SBlocks), and (Y, Z)
// the dual: Y for the equalities, ZLP and ZBlocks for the cone constraints.
// For PrimalInfeasible, (Y, Z) is a certificate normalised so that
// b^T y + <F0, Z> = -1; for DualInfeasible, (X, S) is a ray normalised so
// that c^T x = -1.
type Result struct {
	Status     Status
	X          []float64
	SLP        []float64
	SBlocks    []*mat.SymDense
	Y          []float64
	ZLP        []float64
	ZBlocks    []*mat.SymDense
	PrimalObj  float64 // c^T x
	DualObj    float64 // -<F0, Z> - b^T y
	Gap        float64 // <S, Z>, the complementarity gap
	RelGap     float64 // max(Gap, |PrimalObj - DualObj|) / (1 + |PrimalObj| + |DualObj|)
	PrimalRes  float64 // relative primal residual
	DualRes    float64 // relative dual residual
	Iterations int
	Time       time.Duration
}

// Solve solves p by a homogeneous self-dual primal-dual interior-point
// method with Nesterov–Todd scaling and Mehrotra's predictor-corrector.
// The error is non-nil only for malformed problems (see Problem.Validate)
// and when Settings.Context ends; infeasibility and numerical trouble are
// reported through Result.Status.
func Solve(p *Problem, settings *Settings) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	set := settings.fill()
	start := time.Now()
	cp := compile(p)
	res, err := cp.run(set)
	if err != nil {
		return nil, err
	}
	res.Time = time.Since(start)
	return res, nil
}

type iterate struct {
	x, y     []float64
	s, z     cvec
	tau, kap float64
}

func (cp *compiled) newCvec() cvec { return newCvec(len(cp.lpRows), cp.sizes) }

func (cp *compiled) degree() int {
	d := len(cp.lpRows)
	for _, n := range cp.sizes {
		d += n
	}
	return d
}

// initial follows CVXOPT's conelp: least-squares primal and least-norm dual
// points, shifted into the cone.
func (cp *compiled) initial() (iterate, error) {
	it := iterate{tau: 1, kap: 1}
	one := identityScaling(cp)
	k, err := cp.factor(one)
	if err != nil {
		return it, err
	}
	// Primal: minimise ||F x + F0||, A x = b. Normal equations
	// F^T F x + A^T y = -F^T F0.
	r1 := make([]float64, cp.n)
	cp.applyFT(r1, cp.f0)
	for i := range r1 {
		r1[i] = -r1[i]
	}
	x, _, err := k.solve(r1, cp.bOrZero())
	if err != nil {
		return it, err
	}
	s := cp.newCvec()
	cp.applyF(s, x)
	s.axpy(1, cp.f0)
	shiftIntoCone(s)
	// Dual: minimise ||z|| s.t. F^T z = c + A^T y: z = F u with
	// F^T F u - A^T y = c, A u = 0.
	u, y, err := k.solve(cp.c, make([]float64, cp.p))
	if err != nil {
		return it, err
	}
	for i := range y {
		y[i] = -y[i]
	}
	z := cp.newCvec()
	cp.applyF(z, u)
	shiftIntoCone(z)
	it.x, it.y, it.s, it.z = x, y, s, z
	return it, nil
}

func (cp *compiled) bOrZero() []float64 {
	if cp.p == 0 {
		return nil
	}
	return cp.b
}

func identityScaling(cp *compiled) scaling {
	var sc scaling
	sc.lp.w = make([]float64, len(cp.lpRows))
	sc.lp.lambda = make([]float64, len(cp.lpRows))
	for i := range sc.lp.w {
		sc.lp.w[i], sc.lp.lambda[i] = 1, 1
	}
	for _, n := range cp.sizes {
		id := mat.NewDense(n, n, nil)
		v := mat.NewSymDense(n, nil)
		lam := make([]float64, n)
		for i := 0; i < n; i++ {
			id.Set(i, i, 1)
			v.SetSym(i, i, 1)
			lam[i] = 1
		}
		sc.blk = append(sc.blk, blockScaling{r: id, rinv: id, v: v, lambda: lam})
	}
	return sc
}

// shiftIntoCone adds (1 + max(0, -lambda_min)) e to v, as CVXOPT does, so
// that the starting point is comfortably interior.
func shiftIntoCone(v cvec) {
	m := math.Inf(1)
	for _, x := range v.lp {
		m = math.Min(m, x)
	}
	for _, b := range v.blk {
		var es mat.EigenSym
		if es.Factorize(b, false) {
			m = math.Min(m, es.Values(nil)[0])
		} else {
			m = math.Min(m, -b.Norm(1))
		}
	}
	nrm := v.norm()
	if m > 1e-8*math.Max(nrm, 1) {
		return // comfortably interior already
	}
	shift := 1 - m
	for i := range v.lp {
		v.lp[i] += shift
	}
	for _, b := range v.blk {
		for i := 0; i < b.SymmetricDim(); i++ {
			b.SetSym(i, i, b.At(i, i)+shift)
		}
	}
}

var errRank = errors.New("sdp: the constraints do not determine every variable (rank [F; A] < number of variables)")

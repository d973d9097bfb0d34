package noise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sync"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// StateSpace is a stationary Gaussian process given by a linear
// state-space model, seen in whitened coordinates: a state s of dimension
// StateDim with identity covariance, of which the process is
// sqrt(MarginalVariance) times the first entry, moving between two times
// tau apart by
//
//	s' = Ã(tau) s + ξ,   ξ ~ N(0, I - Ã(tau) Ã(tau)ᵀ) independent,
//
// so that its covariance at lag tau is MarginalVariance·[Ã(tau)]₀₀, and
// Ã(s + t) = Ã(s) Ã(t). gp.StateModel (gp.StateSpace of a Matérn kernel
// of half-integer smoothness) implements it.
//
// MarkovRelease relies on the bounds the model states; they are part of
// what it certifies.
type StateSpace interface {
	// StateDim returns d, the dimension of the state.
	StateDim() int
	// MarginalVariance returns the process variance k(t, t).
	MarginalVariance() float64
	// WhitenedTransition writes a float64 d×d matrix (row-major) into a
	// and returns e >= ||a - Ã(tau)||_2 for the real step tau = dt + dtLo
	// (dtLo is the rounding error of a difference of timestamps, often 0).
	// It must be a deterministic function of its arguments (a release may
	// compute a transition again) and safe for concurrent use.
	WhitenedTransition(a []float64, dt, dtLo float64) (e float64, err error)
	// Contraction returns h and theta < 1 with ||Ã(tau)||_2 <= theta for
	// every tau >= h.
	Contraction() (horizon, theta float64)
}

// MarkovOptions configures NewMarkovRelease.
type MarkovOptions struct {
	// N is the number of points that will be released, or an upper bound
	// on it: the correction η grows with it and is fixed before the first
	// output. Required.
	N int
	// Dims is the number of coordinates per point (sanitize: the three
	// Earth-centred x, y and z), each with independent noise of the same
	// law. Zero means 1.
	Dims int
	// Grid is the output lattice step g: a power of two.
	Grid float64
	// Source supplies the 256-bit key of the release's random streams:
	// nil means crypto/rand; a Seeded source makes the release
	// deterministic (and is reported by Randomness).
	Source Source
	// Workers bounds the goroutines used; zero means GOMAXPROCS.
	Workers int
	// Times, if not nil, are all the timestamps of the release, known in
	// advance (they are public). N is then len(Times) (N may be left 0),
	// every transition is computed and checked before any output, and η
	// is the smaller of the N-only bound and a bound that uses the
	// exponential decay of the kernels' correlations and each step's
	// actual errors, far smaller for long traces. Release must then be
	// given these timestamps, in order.
	Times []float64
	// Context, if set, is polled by Release once per chunk of points
	// (markovChunk, 1024), before the chunk is drawn: once it ends,
	// Release returns its error (context.Canceled or
	// context.DeadlineExceeded) and the release is unusable, so that no
	// point is drawn twice. Points of earlier chunks are already in dst;
	// a caller that stops publishes none of them.
	Context context.Context
}

// Limits of MarkovRelease.
const (
	maxMarkovStateDim   = 8
	maxMarkovComponents = 1024
	maxMarkovPoints     = 1 << 40
	maxMarkovDims       = 64
	// markovChunk is the number of points processed between two
	// synchronisations of the workers.
	markovChunk = 1024
)

// markovCheckpointEvery is the spacing, in points, of the saved float
// states from which the exact path restarts; a test hook.
var markovCheckpointEvery = 256

// MarkovRelease is the exact lattice release of Gaussian noise that is a
// sum of independent state-space components (a Matérn-sum kernel, e.g. a
// cip.Envelope's) plus white noise, at irregular timestamps, in O(n) time
// and O(1) memory per point. See the package documentation ("Linear-time
// release of state-space noise") for what it certifies and why.
//
// Release may be called repeatedly with consecutive chunks of points in
// time order (streaming); the total must not exceed MarkovOptions.N. A
// MarkovRelease is not safe for concurrent use.
type MarkovRelease struct {
	n, dims, workers int
	g                float64
	key              *streamKey
	desc             string

	comps []markovComp
	slots int     // deviates per point and coordinate: Σ d_c + 1 (white)
	eta   float64 // variance of the white noise added per coordinate
	omega float64 // its standard deviation, rounded up: omega² >= eta

	stepIndex map[[2]float64]int32
	steps     [][2]float64    // by step id: fl(Δ) and its rounding error
	trans     [][]*markovStep // [component][step id], nil if not resident
	scal      [][]stepScalars // [component][step id]
	ids       []int32         // step id into point i (i >= 1)
	lastUse   []int64         // by step id: the last chunk that needed it
	fifo      []int32         // resident step ids, oldest first from fifoHead
	fifoHead  int
	chunkSeq  int64

	pos   int
	tLast float64
	times []float64 // MarkovOptions.Times, if given
	// prepared counts the points whose step ids are known; tPrep is the
	// last one's time.
	prepared int
	tPrep    float64
	states   [][]compState // [dim][component]
	ckTime   []float64     // time of checkpoint j (point (j+1)·every)
	every    int
	tasks    []*markovTask
	exact    []*markovExact // one per dim
	failed   error
	ctx      context.Context // MarkovOptions.Context; nil: never ends

	refined int
}

// markovComp is one noise component and what the release derived for it.
type markovComp struct {
	model          StateSpace
	d              int
	h              float64 // output weight: h² >= alpha·MarginalVariance
	horizon, theta float64
	eBudget        float64 // largest e allowed per step
	rBudget        float64 // largest r allowed per step
	slot0          int     // first deviate slot
}

// compState is the float state of one component in one coordinate, its
// error ball, and its checkpoints (state then radius, d+1 floats each).
// The state is carried in double-double, s + lo (see markovTask.stepDD).
type compState struct {
	s    [maxMarkovStateDim]float64
	lo   [maxMarkovStateDim]float64
	ball ball
	ck   []float64
}

// NewMarkovRelease prepares the exact release of noise with covariance
// (at least) alpha·Σ_c k_c at the timestamps later passed to Release, k_c
// the components' kernels, plus white noise of variance Eta, on the lattice
// MarkovOptions.Grid. It reads a 256-bit key from the source and fixes η
// from N before any output.
//
// It errors (wrapping param.ErrInvalid) if there are no components, alpha is not
// positive and finite, a component's dimension is not in 1..8 or its
// variance or contraction certificate is invalid, N is not in 1..2^40,
// Dims not in 1..64, the grid is not a power of two in [2^-1000, 2^1000]
// or is finer than 2^-40 of the noise's standard deviation.
func NewMarkovRelease(comps []StateSpace, alpha float64, opt MarkovOptions) (*MarkovRelease, error) {
	if len(comps) == 0 || len(comps) > maxMarkovComponents {
		return nil, fmt.Errorf("%w: %d noise components, want 1..%d", param.ErrInvalid, len(comps), maxMarkovComponents)
	}
	if err := checkPositive("alpha", alpha); err != nil {
		return nil, err
	}
	if opt.Times != nil {
		if opt.N != 0 && opt.N != len(opt.Times) {
			return nil, fmt.Errorf("%w: N = %d but %d Times", param.ErrInvalid, opt.N, len(opt.Times))
		}
		opt.N = len(opt.Times)
		for i, t := range opt.Times {
			if math.IsNaN(t) || math.IsInf(t, 0) || (i > 0 && t < opt.Times[i-1]) {
				return nil, fmt.Errorf("%w: Times[%d] = %v is not finite or decreases", param.ErrInvalid, i, t)
			}
		}
	}
	if opt.N < 1 || opt.N > maxMarkovPoints {
		return nil, fmt.Errorf("%w: N = %d, want 1..2^40", param.ErrInvalid, opt.N)
	}
	dims := opt.Dims
	if dims == 0 {
		dims = 1
	}
	if dims < 1 || dims > maxMarkovDims {
		return nil, fmt.Errorf("%w: Dims = %d, want 1..%d", param.ErrInvalid, opt.Dims, maxMarkovDims)
	}
	if err := checkGrid(opt.Grid); err != nil {
		return nil, err
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := &MarkovRelease{n: opt.N, dims: dims, workers: workers, g: opt.Grid, desc: Describe(orSecure(opt.Source)),
		stepIndex: map[[2]float64]int32{}, every: markovCheckpointEvery, ctx: opt.Context}
	totalVar := 0.0
	for i, m := range comps {
		if m == nil {
			return nil, fmt.Errorf("%w: component %d is nil", param.ErrInvalid, i)
		}
		c := markovComp{model: m, d: m.StateDim(), slot0: r.slots}
		if c.d < 1 || c.d > maxMarkovStateDim {
			return nil, fmt.Errorf("%w: component %d has state dimension %d, want 1..%d", param.ErrInvalid, i, c.d, maxMarkovStateDim)
		}
		v := m.MarginalVariance()
		if err := checkPositive(fmt.Sprintf("variance of component %d", i), v); err != nil {
			return nil, err
		}
		h, err := weightUp(alpha, v)
		if err != nil {
			return nil, fmt.Errorf("%w: component %d: %v", param.ErrInvalid, i, err)
		}
		c.h = h
		c.horizon, c.theta = m.Contraction()
		if !(c.horizon > 0) || math.IsInf(c.horizon, 1) || !(c.theta > 0 && c.theta < 1) {
			return nil, fmt.Errorf("%w: component %d: contraction certificate (horizon %v, theta %v) invalid", param.ErrInvalid, i, c.horizon, c.theta)
		}
		c.eBudget, c.rBudget = markovBudgets(c.d)
		r.slots += c.d
		r.comps = append(r.comps, c)
		totalVar += h * h
	}
	r.slots++ // the white noise
	if float64(opt.N)*float64(dims)*float64(r.slots) >= 0x1p62 {
		return nil, fmt.Errorf("%w: N·Dims·deviates per point = %d·%d·%d exceeds 2^62 stream indices", param.ErrInvalid, opt.N, dims, r.slots)
	}
	if err := r.fixEta(); err != nil {
		return nil, err
	}
	r.trans = make([][]*markovStep, len(r.comps))
	r.scal = make([][]stepScalars, len(r.comps))
	if opt.Times != nil {
		// Every transition is computed and checked now, in chunks so that
		// the cache stays bounded.
		r.times = slices.Clone(opt.Times)
		if err := r.recordSteps(r.times); err != nil {
			return nil, err
		}
		for lo := 0; lo < len(r.times); lo += markovChunk {
			if err := r.residentSteps(lo, min(lo+markovChunk, len(r.times))); err != nil {
				return nil, err
			}
		}
		if eta, err := r.decayEta(); err == nil && eta < r.eta {
			r.eta, r.omega = eta, numeric.SqrtUp(eta)
		}
	}
	totalVar += r.omega * r.omega
	if sd := math.Sqrt(totalVar) * (1 + 1e-6); sd > maxNoiseToGrid*opt.Grid {
		return nil, fmt.Errorf("%w: grid %g is too fine for noise of standard deviation %g: want g >= sd·2^-40", param.ErrInvalid, opt.Grid, sd)
	}
	var err error
	if r.key, err = newStreamKey(opt.Source); err != nil {
		return nil, err
	}
	r.states = make([][]compState, dims)
	for i := range r.states {
		r.states[i] = make([]compState, len(r.comps))
	}
	return r, nil
}

// markovBudgets returns the largest transition error e and residual r a
// step of a d-dimensional component may have. The model's e is about
// one half-ulp per entry of a matrix with entries in [-1, 1], at most
// d·2^-54 in Frobenius norm plus the width of its enclosure; the
// residual of a B̂ rounded from an accurate factor is about twice that.
// η is computed from these budgets, so they are fixed before any step is
// seen; a step exceeding them is an error (none does for gp's models).
func markovBudgets(d int) (e, r float64) {
	return float64(d) * 0x1p-53, float64(d) * 0x1p-51
}

// weightUp returns the smallest float64 h found with h² >= alpha·v as real
// numbers and h² >= fl(alpha·v), checked exactly with big floats.
func weightUp(alpha, v float64) (float64, error) {
	p := alpha * v
	if !(p > 0) || math.IsInf(p, 1) {
		return 0, fmt.Errorf("alpha·variance = %v·%v is not a positive finite float", alpha, v)
	}
	var exact, fl, hh, hb big.Float
	exact.SetPrec(128).Mul(new(big.Float).SetFloat64(alpha), new(big.Float).SetFloat64(v))
	fl.SetFloat64(p)
	if fl.Cmp(&exact) > 0 {
		exact.Set(&fl)
	}
	h := math.Sqrt(p)
	for {
		hb.SetFloat64(h)
		hh.SetPrec(128).Mul(&hb, &hb)
		if hh.Cmp(&exact) >= 0 {
			return h, nil
		}
		h = math.Nextafter(h, math.Inf(1))
	}
}

// fixEta sets the white-noise variance η from N and the budgets (see the
// package documentation for the proof):
//
//	η_c = h_c²·e^{3R/2}·N(N-1)/2·(ē_c + r̄_c),   R = (N-1)·r̄_c,
//
// bounds ||Ĉ_c - C'_c||_2, the distance between the covariance of the
// implemented recursion and the exact one, and η = Σ_c η_c.
func (r *MarkovRelease) fixEta() error {
	n := float64(r.n)
	eta := 0.0
	for i := range r.comps {
		c := &r.comps[i]
		x := ballUp(1.5 * (n - 1) * c.rBudget)
		if x > 0.5 {
			return fmt.Errorf("%w: N = %d is too large for the rounding budgets", param.ErrInvalid, r.n)
		}
		grow := ballUp(1 + 2*x) // e^x <= 1 + 2x for 0 <= x <= 1/2
		pairs := ballUp(n * (n - 1) / 2)
		eta = ballUp(eta + ballUp(ballUp(c.h*c.h)*grow*pairs*ballUp(c.eBudget+c.rBudget)))
	}
	r.eta = eta
	r.omega = numeric.SqrtUp(eta)
	return nil
}

// Eta returns η, the proven bound on the distance between the implemented
// recursion's covariance and alpha·Σ_c k_c; white noise of variance
// ω² >= η (ω rounded up) is added to every coordinate, so that the
// release's covariance dominates alpha·Σ_c k_c exactly. Callers state it
// in certificates, as they state a Cholesky jitter.
func (r *MarkovRelease) Eta() float64 { return r.eta }

// Refined returns how many coordinates the floating-point path could not
// decide and the exact path did.
func (r *MarkovRelease) Refined() int { return r.refined }

// DistinctSteps returns the number of distinct time steps seen, each with
// one rigorous transition per component (at most 16,384 are kept at a
// time; older ones are computed again if they recur).
func (r *MarkovRelease) DistinctSteps() int { return len(r.steps) }

// Released returns the number of points released so far.
func (r *MarkovRelease) Released() int { return r.pos }

// Randomness describes the source of the key, as Describe does:
// "crypto", "seeded:N" or "custom".
func (r *MarkovRelease) Randomness() string { return r.desc }

// Release releases the next len(ts) points: for each coordinate dim,
// dst[dim][i] = g·round((x[dim][i] + W_dim(ts[i]))/g), the exact lattice
// rounding of x + W for W the noise described in the package
// documentation, one independent draw per coordinate. dst[dim] may alias
// x[dim]. Timestamps are in the components' units of time, non-decreasing
// across calls.
//
// It errors (wrapping param.ErrInvalid), before releasing anything of the chunk,
// if len(x) or len(dst) is not Dims, a slice's length is not len(ts), the
// total would exceed N, a timestamp is not finite or decreases, or an x is
// not finite or |x|/g > 2^52. After any other error (probability below
// 2^-4000, or a model's bound beyond its budget) the release is unusable.
func (r *MarkovRelease) Release(dst, x [][]float64, ts []float64) error {
	if r.failed != nil {
		return fmt.Errorf("noise: release unusable after an earlier error: %w", r.failed)
	}
	if err := r.checkChunk(dst, x, ts); err != nil {
		return err
	}
	for lo := 0; lo < len(ts); lo += markovChunk {
		if r.ctx != nil {
			if err := r.ctx.Err(); err != nil {
				r.failed = err
				return err
			}
		}
		hi := min(lo+markovChunk, len(ts))
		if err := r.releaseChunk(dst, x, ts, lo, hi); err != nil {
			r.failed = err
			return err
		}
	}
	return nil
}

func (r *MarkovRelease) checkChunk(dst, x [][]float64, ts []float64) error {
	if len(x) != r.dims || len(dst) != r.dims {
		return fmt.Errorf("%w: %d coordinate slices in x and %d in dst, want %d", param.ErrInvalid, len(x), len(dst), r.dims)
	}
	for dim := range r.dims {
		if len(x[dim]) != len(ts) || len(dst[dim]) != len(ts) {
			return fmt.Errorf("%w: coordinate %d: len(x) = %d, len(dst) = %d, want len(ts) = %d", param.ErrInvalid, dim, len(x[dim]), len(dst[dim]), len(ts))
		}
		for i, v := range x[dim] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: x[%d][%d] = %v is not finite", param.ErrInvalid, dim, i, v)
			}
			if math.Abs(v) > maxInputMultiple*r.g {
				return fmt.Errorf("%w: x[%d][%d] = %v is too large for grid %g: |x|/g must be at most 2^52", param.ErrInvalid, dim, i, v, r.g)
			}
		}
	}
	if r.pos+len(ts) > r.n {
		return fmt.Errorf("%w: %d points released and %d more would exceed N = %d", param.ErrInvalid, r.pos, len(ts), r.n)
	}
	prev, have := r.tLast, r.pos > 0
	for i, t := range ts {
		if r.times != nil && math.Float64bits(t) != math.Float64bits(r.times[r.pos+i]) {
			return fmt.Errorf("%w: ts[%d] = %v differs from Times[%d] = %v given to NewMarkovRelease", param.ErrInvalid, i, t, r.pos+i, r.times[r.pos+i])
		}
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("%w: ts[%d] = %v is not finite", param.ErrInvalid, i, t)
		}
		if have && t < prev {
			return fmt.Errorf("%w: ts[%d] = %v is before the previous timestamp %v", param.ErrInvalid, i, t, prev)
		}
		prev, have = t, true
	}
	return nil
}

// releaseChunk releases points lo..hi-1 of the call (global indices
// r.pos..): transitions first (sequential, cached), then the components'
// recursions in parallel, then per coordinate the output cells.
func (r *MarkovRelease) releaseChunk(dst, x [][]float64, ts []float64, lo, hi int) error {
	base := r.pos
	if r.times == nil {
		if err := r.recordSteps(ts[lo:hi]); err != nil {
			return err
		}
	}
	if err := r.residentSteps(base, base+hi-lo); err != nil {
		return err
	}
	groups := max(1, min(len(r.comps), r.workers/r.dims))
	if len(r.tasks) == 0 {
		for dim := range r.dims {
			for gi := range groups {
				r.tasks = append(r.tasks, newMarkovTask(r, dim, gi, groups))
			}
			r.exact = append(r.exact, newMarkovExact(r, dim))
		}
	}
	m := hi - lo
	var wg sync.WaitGroup
	errs := make([]error, len(r.tasks))
	for ti, t := range r.tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[ti] = t.run(base, m)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	refined := make([]int, r.dims)
	errs = errs[:r.dims]
	for dim := range r.dims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refined[dim], errs[dim] = r.combine(dim, groups, base, m, x[dim][lo:hi], dst[dim][lo:hi], ts[lo:hi])
		}()
	}
	wg.Wait()
	for _, v := range refined {
		r.refined += v
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.pos += m
	r.tLast = ts[hi-1]
	return nil
}

// recordSteps records the step id of every point of ts (the next points
// after those already recorded) and the checkpoint times. A step is the
// exact real difference of consecutive timestamps, kept as fl(t - t') and
// its rounding error.
func (r *MarkovRelease) recordSteps(ts []float64) error {
	prev, have := r.tPrep, r.prepared > 0
	for i, t := range ts {
		k := r.prepared + i
		if have {
			hi, lo := numeric.TwoSum(t, -prev) // hi + lo = t - prev exactly
			key := [2]float64{hi, lo}
			id, ok := r.stepIndex[key]
			if !ok {
				if len(r.steps) >= math.MaxInt32 {
					return fmt.Errorf("noise: more than 2^31 distinct time steps")
				}
				id = int32(len(r.steps))
				r.stepIndex[key] = id
				r.steps = append(r.steps, key)
				r.lastUse = append(r.lastUse, 0)
				for c := range r.comps {
					r.trans[c] = append(r.trans[c], nil)
					r.scal[c] = append(r.scal[c], stepScalars{})
				}
			}
			r.ids = append(r.ids, id)
		} else {
			r.ids = append(r.ids, -1)
		}
		if k > 0 && k%r.every == 0 {
			r.ckTime = append(r.ckTime, t)
		}
		prev, have = t, true
	}
	if len(ts) > 0 {
		r.tPrep = ts[len(ts)-1]
	}
	r.prepared += len(ts)
	return nil
}

// markovCacheSteps bounds the distinct steps whose transitions are kept
// (about 300 bytes per step and component): timestamps with sub-second
// jitter can make every step distinct. Evicted transitions are computed
// again if needed (they are deterministic); a test hook.
var markovCacheSteps = 1 << 14

// residentSteps makes the transitions of points from..to-1 resident,
// computing the missing ones in parallel over steps and components (and
// recording their e and r), then evicts the oldest transitions not needed
// by these points beyond markovCacheSteps.
func (r *MarkovRelease) residentSteps(from, to int) error {
	r.chunkSeq++
	var jobs []int32
	for k := from; k < to; k++ {
		id := r.ids[k]
		if id < 0 || r.lastUse[id] == r.chunkSeq {
			continue
		}
		r.lastUse[id] = r.chunkSeq
		if r.trans[0][id] == nil {
			jobs = append(jobs, id)
		}
	}
	if len(jobs) > 0 {
		nc := len(r.comps)
		nj := len(jobs) * nc
		errs := make([]error, nj)
		var next int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range min(r.workers, nj) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					q := next
					next++
					mu.Unlock()
					if q >= int64(nj) {
						return
					}
					id, c := jobs[q/int64(nc)], int(q%int64(nc))
					st, err := r.comps[c].transition(r.steps[id][0], r.steps[id][1])
					if err != nil {
						errs[q] = err
						continue
					}
					r.trans[c][id] = st
					r.scal[c][id] = stepScalars{e: st.e, r: st.r}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		r.fifo = append(r.fifo, jobs...)
	}
	// Evict in insertion order, requeueing what these points need.
	for tries := len(r.fifo) - r.fifoHead; len(r.fifo)-r.fifoHead > markovCacheSteps && tries > 0; tries-- {
		id := r.fifo[r.fifoHead]
		r.fifoHead++
		if r.lastUse[id] == r.chunkSeq {
			r.fifo = append(r.fifo, id)
			continue
		}
		for c := range r.comps {
			r.trans[c][id] = nil
		}
	}
	if r.fifoHead > 1024 && r.fifoHead > len(r.fifo)/2 {
		r.fifo = append(r.fifo[:0], r.fifo[r.fifoHead:]...)
		r.fifoHead = 0
	}
	return nil
}

// step returns component c's transition for step id: the resident one, or
// (in the exact path, for a step evicted since) one computed again, which
// is the same (transitions are deterministic).
func (r *MarkovRelease) step(c int, id int32) (*markovStep, error) {
	if st := r.trans[c][id]; st != nil {
		return st, nil
	}
	return r.comps[c].transition(r.steps[id][0], r.steps[id][1])
}

// stepScalars are a transition's bounds, kept for every distinct step.
type stepScalars struct{ e, r float64 }

// transition computes and checks the component's step over hi + lo.
func (c *markovComp) transition(hi, lo float64) (*markovStep, error) {
	a := make([]float64, c.d*c.d)
	e, err := c.model.WhitenedTransition(a, hi, lo)
	if err != nil {
		return nil, fmt.Errorf("noise: transition over %v s: %w", hi, err)
	}
	if !(e >= 0 && e <= c.eBudget) {
		return nil, fmt.Errorf("noise: transition over %v s: error bound %g exceeds the budget %g", hi, e, c.eBudget)
	}
	for _, v := range a {
		if math.IsNaN(v) || math.Abs(v) > 2 {
			return nil, fmt.Errorf("noise: transition over %v s has an entry %v outside [-2, 2]", hi, v)
		}
	}
	st, err := newMarkovStep(a, c.d, e, hi)
	if err != nil {
		return nil, err
	}
	if !(st.r <= c.rBudget) {
		return nil, fmt.Errorf("noise: transition over %v s: residual %g exceeds the budget %g", hi, st.r, c.rBudget)
	}
	return st, nil
}

// ball is a rigorous bound on ||ŝ - s^f||_2, the distance between a
// component's exact-arithmetic state and its computed one, propagated so
// that old errors decay.
//
// The error obeys ε_k = Â_k ε_(k-1) + λ_k, λ_k the step's local error. Over
// a block of steps from m to k the old error is multiplied by Â_k···Â_(m+1),
// whose norm is at most κ = Π sqrt(1 + r) (each ||Â|| <= sqrt(1+r)), and,
// once the block spans j >= 1 horizons h, at most theta^j + κ·Σe: the exact
// product is Ã(t_k - t_m) = Ã(h)^j Ã(t_k - t_m - j·h), of norm <= theta^j,
// and the telescoping sum Â···Â - Ã···Ã = Σ_i Â_k···Â_(i+1)(Â_i - Ã_i)
// Ã_(i-1)···Ã_(m+1) has norm <= κ·Σ_i e_i (||Ã|| <= 1). So the radius is
// κ·old + fresh within a block, and at its end old becomes
// min(κ, theta^j + κΣe)·old + fresh. Every update rounds up (ballUp).
type ball struct {
	old, kappa, eSum, fresh float64
	elapsed                 float64 // Σ dt of the block's steps, in float
	count                   int
}

func (b *ball) reset(old float64) { *b = ball{old: old, kappa: 1} }

func (b *ball) radius() float64 { return ballUp(b.kappa*b.old + b.fresh) }

// step advances the ball over one transition with local error local.
// The block ends when the exact elapsed time reaches the horizon: the
// float sum of the dt's is within a relative (count+1)·2^-53 of the exact
// sum of dt + lo (|lo| <= 2^-53·dt), so the lower bound below is one.
func (b *ball) step(st *markovStep, local, horizon, theta float64) {
	b.kappa = ballUp(b.kappa * st.na)
	b.eSum = ballUp(b.eSum + st.e)
	b.fresh = ballUp(st.na*b.fresh + local)
	b.elapsed += st.dt
	b.count++
	if lower := b.elapsed * (1 - float64(b.count+2)*0x1p-52); lower >= horizon {
		j := math.Floor(lower / horizon * (1 - 0x1p-50))
		f := math.Min(b.kappa, ballUp(numeric.PowUp(theta, max(j, 1), ballUp)+b.kappa*b.eSum))
		b.reset(ballUp(f*b.old + b.fresh))
	}
}

package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// index returns the stream index of deviate slot of point k, coordinate
// dim: every deviate of a release has its own index, so its own stream.
func (r *MarkovRelease) index(k, dim, slot int) uint64 {
	return (uint64(k)*uint64(r.dims)+uint64(dim))*uint64(r.slots) + uint64(slot)
}

// markovTraceHook, set only by tests, sees the float value and error bound
// of every coordinate's noise (from concurrent goroutines).
var markovTraceHook func(dim, k int, w, bound float64)

// markovTask runs the float recursions of a group of components for one
// coordinate over a chunk, writing per point the partial output
// Σ h_c s_c0, the sum of its terms' magnitudes and the error radius
// Σ h_c ρ_c.
type markovTask struct {
	r      *MarkovRelease
	dim    int
	comps  []int
	stream *keyStream
	ns     normalSampler
	z      LazyNormal
	w      []float64
	abs    []float64
	rad    []float64
}

func newMarkovTask(r *MarkovRelease, dim, group, groups int) *markovTask {
	t := &markovTask{r: r, dim: dim, stream: r.key.stream(0),
		w: make([]float64, markovChunk), abs: make([]float64, markovChunk), rad: make([]float64, markovChunk)}
	for c := group; c < len(r.comps); c += groups {
		t.comps = append(t.comps, c)
	}
	return t
}

// deviate draws the exact deviate of stream index and returns its float
// value and error bound. The digit reader is fresh, so the deviate is a
// function of the key and index alone.
func deviateFloat(s *keyStream, ns *normalSampler, z *LazyNormal, index uint64) (f, e float64) {
	s.reset(index)
	ns.rd = digitReader{src: s, ks: s}
	ns.sample(z)
	return z.Float64(), z.ErrorBound()
}

// deviateDD is deviateFloat with the deviate as a double-double.
func deviateDD(s *keyStream, ns *normalSampler, z *LazyNormal, index uint64) (hi, lo, e float64) {
	s.reset(index)
	ns.rd = digitReader{src: s, ks: s}
	ns.sample(z)
	return z.doubleDouble()
}

// run advances the task's components over points base..base+m-1.
//
// One step of a component computes s' = Â s + B̂ z^f in double-double
// (stepDD), whose local error bound joins the component's ball; the output
// and the checkpoints use the high parts, with the low parts added to the
// radius.
func (t *markovTask) run(base, m int) error {
	r := t.r
	var zh, zl [maxMarkovStateDim]float64
	for i := range m {
		k := base + i
		id := r.ids[k]
		w, ab, rd := 0.0, 0.0, 0.0
		for _, c := range t.comps {
			comp := &r.comps[c]
			st := &r.states[t.dim][c]
			d := comp.d
			zsum := 0.0
			for j := range d {
				var e float64
				zh[j], zl[j], e = deviateDD(t.stream, &t.ns, &t.z, r.index(k, t.dim, comp.slot0+j))
				zsum += e
			}
			if id < 0 {
				copy(st.s[:d], zh[:d])
				st.lo = [maxMarkovStateDim]float64{}
				copy(st.lo[:d], zl[:d])
				st.ball.reset(0)
				st.ball.fresh = ballUp(zsum)
			} else {
				st.ball.step(r.trans[c][id], t.stepDD(st, d, r.trans[c][id], zh[:d], zl[:d], zsum), comp.horizon, comp.theta)
			}
			// The output and the checkpoints use s[0] alone: the low part
			// of a double-double state joins the radius.
			lo := 0.0
			for _, x := range st.lo[:d] {
				lo += math.Abs(x)
			}
			rho := ballUp(st.ball.radius() + ballUp(lo))
			if k > 0 && k%r.every == 0 {
				st.ck = append(st.ck, st.s[:d]...)
				st.ck = append(st.ck, rho)
			}
			p := comp.h * st.s[0]
			w += p
			ab += math.Abs(p)
			rd += comp.h * rho
		}
		t.w[i], t.abs[i], t.rad[i] = w, ab, rd
	}
	return nil
}

// stepDD advances a component's double-double state s + lo by
// s' = Â s + B̂ z^f and returns the step's local error (a bound on the
// 2-norm of the difference from the exact step of the float state).
//
// Why: a component whose lengthscale is long next to the trace (the
// envelope of a family reaching days, or the route's common offset) never
// contracts its float error ball, which then grows by a unit roundoff per
// step; over a million points that ball decides cells often enough, and
// each such cell replays the component from the first point, so a release
// became quadratic in its length. In double-double the error per step is
// about u² of the state plus the deviates' own float error times ||B̂||_F
// (about sqrt(1 - â²), 2.6e-3 for a 3 s step at a 10^6 s lengthscale,
// where a bound by ||Â|| would be about 1).
//
// The deviates are double-doubles too (LazyNormal.doubleDouble). Each row's
// products a·s_hi and b·z_hi are exact as a value plus an FMA remainder
// and their sum exact as TwoSum pairs (Knuth); what is rounded is the
// products with low parts (at most u|a lo| each) and the float sum of the K low
// parts (at most γ_K times the sum of their magnitudes); the final TwoSum is
// exact. Subnormal underflow adds at most half an ulp of the smallest
// subnormal per operation.
func (t *markovTask) stepDD(st *compState, d int, tr *markovStep, zh, zl []float64, zsum float64) float64 {
	var nh, nl [maxMarkovStateDim]float64
	local := tr.nb * ballUp(zsum)
	for row := range d {
		hi, low, mag, prods := 0.0, 0.0, 0.0, 0.0
		k := 0
		add := func(x float64) {
			low += x
			mag += math.Abs(x)
			k++
		}
		arow := tr.a[row*d : row*d+d]
		for j, a := range arow {
			ph := a * st.s[j]
			var e float64
			hi, e = numeric.TwoSum(hi, ph)
			add(e)
			add(prodErr(a, st.s[j], ph))
			p2 := a * st.lo[j]
			add(p2)
			prods += math.Abs(p2)
		}
		for j, b := range tr.b[row*d : row*d+row+1] {
			qh := b * zh[j]
			var e float64
			hi, e = numeric.TwoSum(hi, qh)
			add(e)
			add(prodErr(b, zh[j], qh))
			q2 := b * zl[j]
			add(q2)
			prods += math.Abs(q2)
		}
		nh[row], nl[row] = numeric.TwoSum(hi, low)
		ops := 6*d + 2
		local += ballUp(gammaK(k)*ballUp(mag) + unitRoundoff*ballUp(prods) + float64(ops)*0x1p-1074)
	}
	copy(st.s[:d], nh[:d])
	copy(st.lo[:d], nl[:d])
	return ballUp(local)
}

// combine adds the groups' partial outputs and the white noise of
// coordinate dim, decides each output cell from the float enclosure where
// it can and by the exact path otherwise, and writes dst.
//
// W = Σ_c h_c ŝ_c0 + ω z'. Its float value is a sum of C+1 products
// computed in some order (partial sums per group, then across groups), so
// its rounding is at most γ_(C+1)·Σ|terms|; the states' errors add
// Σ h_c ρ_c and the white deviate's ω·zerr.
func (r *MarkovRelease) combine(dim, groups, base, m int, x, dst, ts []float64) (int, error) {
	ex := r.exact[dim]
	refined := 0
	nterms := len(r.comps) + 1
	gam := gammaK(nterms)
	white := r.slots - 1
	for i := range m {
		k := base + i
		w, ab, rd := 0.0, 0.0, 0.0
		for gi := range groups {
			t := r.tasks[dim*groups+gi]
			w += t.w[i]
			ab += t.abs[i]
			rd += t.rad[i]
		}
		ze := 0.0
		if r.omega > 0 {
			zf, e := deviateFloat(ex.stream, &ex.ns, &ex.z, r.index(k, dim, white))
			p := r.omega * zf
			w += p
			ab += math.Abs(p)
			ze = e
		}
		bound := ballUp(ballUp(rd) + r.omega*ze + gam*ballUp(ab) + float64(nterms)*0x1p-1074)
		if markovTraceHook != nil {
			markovTraceHook(dim, k, w, bound)
		}
		c, ok := cellFloat(x[i], w, bound*boundInflation, r.g)
		if !ok {
			refined++
			var err error
			if c, err = ex.cell(k, x[i], ts[i]); err != nil {
				return refined, err
			}
		}
		if math.Abs(c) > maxOutputMultiple {
			return refined, fmt.Errorf("noise: exact state-space release: output %d is %g grid steps from 0, beyond the 2^53 where grid multiples are floats", k, c)
		}
		dst[i] = c * r.g
	}
	return refined, nil
}

// markovExact decides output cells the float path left open: it recomputes
// the coordinate in big-float ball arithmetic, with the deviates refined to
// b bits (regenerated from their streams, so nothing was stored), from a
// checkpoint old enough for its float error ball to have decayed below
// 2^-b, or from the first point, doubling b until the enclosure of x + W
// lies in one cell.
type markovExact struct {
	r      *MarkovRelease
	dim    int
	stream *keyStream
	ns     normalSampler
	z      LazyNormal
	lo, hi big.Float
	// fromCheckpoint counts component recomputations that started from a
	// checkpoint rather than the first point (tests).
	fromCheckpoint int
}

func newMarkovExact(r *MarkovRelease, dim int) *markovExact {
	return &markovExact{r: r, dim: dim, stream: r.key.stream(0)}
}

// deviateMid sets mid to the midpoint of the b-bit enclosure of the
// deviate of stream index (radius 2^-(b+1)): the deviate is redrawn from
// its stream and refined by reading on in the same stream.
func (e *markovExact) deviateMid(index uint64, b uint, mid *big.Float) {
	e.stream.reset(index)
	e.ns.rd = digitReader{src: e.stream, ks: e.stream}
	e.ns.sample(&e.z)
	e.z.refine(&e.ns.rd, b)
	e.z.enclose(b, &e.lo, &e.hi)
	mid.SetPrec(max(e.lo.Prec(), e.hi.Prec())+1).Add(&e.lo, &e.hi)
	mid.SetMantExp(mid, -1)
}

// absUpBig returns a float64 >= |x| (x of moderate size: states and
// deviates).
func absUpBig(x *big.Float) float64 {
	var a big.Float
	a.Abs(x)
	return numeric.FloatUp(&a)
}

// gammaUnits returns γ_m at precision prec, in units of 2^-b:
// m·2^-prec/(1 - m·2^-prec)·2^b, rounded up.
func gammaUnits(m int, prec, b uint) float64 {
	return ballUp(float64(m) * math.Ldexp(1, int(b)-int(prec)) * (1 + 0x1p-60))
}

// cell decides coordinate dim of point k (time tk, input x) exactly.
func (e *markovExact) cell(k int, x, tk float64) (float64, error) {
	r := e.r
	_, ge := math.Frexp(r.g) // g = 2^(ge-1)
	var xb, rb, vlo, vhi big.Float
	xb.SetFloat64(x)
	for b := exactFirstBits; b <= maxExactBits; b *= 2 {
		mid, rad, prec, err := e.enclose(k, tk, b)
		if err != nil {
			return 0, err
		}
		rb.SetFloat64(rad)
		rb.SetMantExp(&rb, -int(b))
		vlo.SetPrec(prec+64).SetMode(big.ToNegativeInf).Add(&xb, mid)
		vlo.Sub(&vlo, &rb)
		vhi.SetPrec(prec+64).SetMode(big.ToPositiveInf).Add(&xb, mid)
		vhi.Add(&vhi, &rb)
		vlo.SetMantExp(&vlo, 1-ge)
		vhi.SetMantExp(&vhi, 1-ge)
		if c, ok := sameCell(&vlo, &vhi); ok {
			return c, nil
		}
	}
	return 0, fmt.Errorf("noise: exact state-space release: point %d undecided after %d bits per deviate (an event of probability about 2^-%d)", k, maxExactBits, maxExactBits)
}

// enclose returns W = Σ_c h_c ŝ_c0 + ω z' of coordinate dim at point k as
// a big float mid and a radius rad in units of 2^-b (|W - mid| <= rad·2^-b),
// for deviates refined to b bits, and the working precision. Radii are
// carried in units of 2^-b so that they neither underflow nor lose the
// deviates' 2^-(b+1).
func (e *markovExact) enclose(k int, tk float64, b uint) (*big.Float, float64, uint, error) {
	r := e.r
	prec := b + 72 + 2*uint(bits.Len(uint(k+1)))
	mid := new(big.Float).SetPrec(prec)
	var t big.Float
	rad, ab := 0.0, 0.0
	for c := range r.comps {
		s0, rho, err := e.component(c, k, tk, b, prec)
		if err != nil {
			return nil, 0, 0, err
		}
		t.SetPrec(prec).Mul(new(big.Float).SetFloat64(r.comps[c].h), s0)
		mid.Add(mid, &t)
		ab += absUpBig(&t)
		rad += r.comps[c].h * rho
	}
	if r.omega > 0 {
		var z big.Float
		e.deviateMid(r.index(k, e.dim, r.slots-1), b, &z)
		t.SetPrec(prec).Mul(new(big.Float).SetFloat64(r.omega), &z)
		mid.Add(mid, &t)
		ab += absUpBig(&t)
		rad += r.omega * 0.5
	}
	// The products and the sum, rounded to nearest at prec: γ_(C+1).
	return mid, ballUp(ballUp(rad) + gammaUnits(len(r.comps)+1, prec, b)*ballUp(ab)), prec, nil
}

// component returns the first state entry of component c at point k,
// computed in big floats at precision prec with deviates at b bits, and
// its error radius in units of 2^-b.
func (e *markovExact) component(c, k int, tk float64, b, prec uint) (*big.Float, float64, error) {
	r := e.r
	comp := &r.comps[c]
	d := comp.d
	zhalf := 0.5 // the deviates' enclosure radius, in units
	s := make([]big.Float, d)
	ns := make([]big.Float, d)
	zm := make([]big.Float, d)
	for j := range d {
		s[j].SetPrec(prec)
		ns[j].SetPrec(prec)
	}
	var bl ball
	start := e.checkpoint(comp, c, k, tk, b)
	if start > 0 {
		e.fromCheckpoint++
		j := start/r.every - 1
		ck := r.states[e.dim][c].ck[j*(d+1) : (j+1)*(d+1)]
		for i := range d {
			s[i].SetFloat64(ck[i])
		}
		bl.reset(math.Ldexp(ck[d], int(b)))
	} else {
		for j := range d {
			e.deviateMid(r.index(0, e.dim, comp.slot0+j), b, &s[j])
		}
		bl.reset(0)
		bl.fresh = float64(d) * zhalf
	}
	gam := gammaUnits(2*d, prec, b)
	var p big.Float
	p.SetPrec(prec)
	var af big.Float
	for i := start + 1; i <= k; i++ {
		tr, err := r.step(c, r.ids[i])
		if err != nil {
			return nil, 0, err
		}
		for j := range d {
			e.deviateMid(r.index(i, e.dim, comp.slot0+j), b, &zm[j])
		}
		total := 0.0
		for row := range d {
			v := &ns[row]
			v.SetInt64(0)
			for j := range d {
				a := tr.a[row*d+j]
				if a == 0 {
					continue
				}
				p.Mul(af.SetFloat64(a), &s[j])
				v.Add(v, &p)
				total += math.Abs(a) * absUpBig(&s[j])
			}
			for j := 0; j <= row; j++ {
				bb := tr.b[row*d+j]
				if bb == 0 {
					continue
				}
				p.Mul(af.SetFloat64(bb), &zm[j])
				v.Add(v, &p)
				total += math.Abs(bb) * absUpBig(&zm[j])
			}
		}
		for j := range d {
			s[j].Set(&ns[j])
		}
		local := ballUp(gam*ballUp(total) + tr.na*float64(d)*zhalf)
		bl.step(tr, local, comp.horizon, comp.theta)
	}
	return &s[0], bl.radius(), nil
}

// checkpoint returns the point of the latest checkpoint of component c
// before k whose float error ball has decayed by about 2^-(b+8) by point
// k, estimated at 2 horizons per factor theta, or 0 (start from the
// first point, where there is no float error) if none is that old or its
// radius does not fit in units of 2^-b. The choice affects only the cost:
// the radius carried from it is rigorous either way.
func (e *markovExact) checkpoint(comp *markovComp, c, k int, tk float64, b uint) int {
	r := e.r
	nck := (k-1)/r.every - 1 // checkpoints j = 0..nck are at points < k
	if nck < 0 {
		return 0
	}
	ck := r.states[e.dim][c].ck
	d := comp.d
	rho := ck[nck*(d+1)+d]
	if rho == 0 || math.IsInf(math.Ldexp(rho, int(b)), 1) {
		return 0
	}
	_, ex := math.Frexp(rho)
	blocks := float64(ex+int(b)+8) / math.Log2(1/comp.theta)
	back := math.Max(blocks, 1) * 2 * comp.horizon
	// The latest j <= nck with ckTime[j] <= tk - back.
	j := sort.Search(nck+1, func(j int) bool { return r.ckTime[j] > tk-back }) - 1
	if j < 0 || math.IsInf(math.Ldexp(ck[j*(d+1)+d], int(b)), 1) {
		return 0
	}
	return (j + 1) * r.every
}

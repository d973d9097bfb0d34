package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// Limits of the exact lattice release.
const (
	// maxInputMultiple: |x|/g <= 2^52, so x/g is exact and every lattice
	// point within 2^52 steps of x is a float.
	maxInputMultiple = 0x1p52
	// maxOutputMultiple: outputs c·g with |c| <= 2^53 are exact floats.
	// With the limits on x and on the noise, exceeding it takes a 2^12-σ
	// draw.
	maxOutputMultiple = 0x1p53
	// maxNoiseToGrid: the largest noise standard deviation, in grid steps.
	maxNoiseToGrid = 0x1p40
	// minGrid and maxGrid keep g, g/2 and x/g normal floats.
	minGrid = 0x1p-1000
	maxGrid = 0x1p1000
	// maxExactBits caps refinement: the deviates' enclosures are refined
	// to 64, 128, …, 4096 fraction bits. A coordinate still undecided then
	// lies within about 2^-4000·σ of a cell boundary, an event of
	// probability about 2^-4000 per coordinate.
	maxExactBits = 4096
)

// Test hooks, set only by tests: boundInflation multiplies the
// floating-point error bounds (+Inf sends every coordinate down the exact
// path), and exactFirstBits is the precision of the first exact round (low
// values make the refinement loop run several rounds).
var (
	boundInflation      = 1.0
	exactFirstBits uint = 64
)

// exactRelease holds the state of one lattice release: the deviates, and
// the big-float buffers of the exact path, allocated only if it is taken.
type exactRelease struct {
	a        linearMap
	s        normalSampler
	z        []LazyNormal
	zlo, zhi []big.Float
	zbits    []uint // bits at which zlo[j], zhi[j] were computed (0: not yet)
	refined  int    // coordinates the floating-point path could not decide
}

// releaseOnGrid writes y_i = g·round((x_i + (A z)_i)/g) into dst for
// fresh exact standard normal deviates z: the exact lattice rounding of
// x + W, W ~ N(0, A Aᵀ). Arguments are validated by the caller; dst may
// alias x.
//
// Every z_j is drawn first, with 64 fraction bits. W is then computed in
// floating point with a rigorous error bound (linearMap.applyFloat); a
// coordinate whose enclosure of x_i + W_i lies inside one grid cell is
// decided there. Otherwise its deviates are refined and (A z)_i is enclosed
// with directed-rounding big floats, doubling the bits until the enclosure
// fits in one cell. Either way the output is the cell of the exact real
// x_i + W_i, so it depends on x only through that sum.
func releaseOnGrid(dst, x []float64, a linearMap, g float64, src Source) (refined int, err error) {
	n, k := a.dims()
	r := &exactRelease{a: a, s: normalSampler{rd: digitReader{src: orSecure(src)}}, z: make([]LazyNormal, k)}
	digits := make([]uint32, minNormalDigits*k)
	zf, zerr := make([]float64, k), make([]float64, k)
	for j := range r.z {
		// Share one slab of digits; a deviate needing more reallocates.
		r.z[j].digits = digits[j*minNormalDigits : j*minNormalDigits : (j+1)*minNormalDigits]
		r.s.sample(&r.z[j])
		zf[j] = r.z[j].Float64()
		zerr[j] = r.z[j].ErrorBound()
	}
	w, bound := make([]float64, n), make([]float64, n)
	a.applyFloat(w, bound, zf, zerr)
	for i := range n {
		c, ok := cellFloat(x[i], w[i], bound[i]*boundInflation, g)
		if !ok {
			r.refined++
			if c, err = r.cellExact(i, x[i], g); err != nil {
				return r.refined, err
			}
		}
		if math.Abs(c) > maxOutputMultiple {
			return r.refined, fmt.Errorf("noise: exact lattice release: output %d is %g grid steps from 0, beyond the 2^53 where grid multiples are floats", i, c)
		}
		dst[i] = c * g
	}
	return r.refined, nil
}

// cellFloat decides round((x + W)/g) from w = fl(W) with |w - W| <= bound,
// if the enclosure allows. v = fl(x + w) is within u|v| of x + w; v/g and
// c·g are exact (g a power of two) and so is v - c·g (Sterbenz, since
// |v/g - c| <= 1/2). If |v - c·g| plus the total error is below g/2, the
// exact x + W lies strictly inside cell c. The error sum is inflated by
// 2^-30 to cover its own rounding; NaN or Inf bounds fail the test and go
// to the exact path.
func cellFloat(x, w, bound, g float64) (c float64, ok bool) {
	v := x + w
	c = math.Round(v / g)
	e := (bound+math.Abs(v)*unitRoundoff)*(1+0x1p-30) + 0x1p-1000
	return c, math.Abs(v-c*g)+e < g/2
}

// cellExact decides coordinate i by refining its deviates: at b bits each
// z_j lies in an interval of width 2^-b, the map encloses (A z)_i at
// precision b + 64 + log2 k, and x_i is added with outward rounding.
func (r *exactRelease) cellExact(i int, x, g float64) (float64, error) {
	_, k := r.a.dims()
	if r.zlo == nil {
		r.zlo, r.zhi = make([]big.Float, k), make([]big.Float, k)
		r.zbits = make([]uint, k)
	}
	lo, hi := r.a.inputs(i)
	var wlo, whi, vlo, vhi, xb big.Float
	xb.SetFloat64(x)
	_, ge := math.Frexp(g) // g = 2^(ge-1)
	for b := exactFirstBits; b <= maxExactBits; b *= 2 {
		for j := lo; j < hi; j++ {
			if r.zbits[j] != b {
				r.z[j].refine(&r.s.rd, b)
				r.z[j].enclose(b, &r.zlo[j], &r.zhi[j])
				r.zbits[j] = b
			}
		}
		prec := b + 64 + uint(bits.Len(uint(k)))
		r.a.enclose(i, r.zlo, r.zhi, prec, &wlo, &whi)
		vlo.SetPrec(prec+64).SetMode(big.ToNegativeInf).Add(&wlo, &xb)
		vhi.SetPrec(prec+64).SetMode(big.ToPositiveInf).Add(&whi, &xb)
		// In grid units (exact: a power-of-two scaling).
		vlo.SetMantExp(&vlo, 1-ge)
		vhi.SetMantExp(&vhi, 1-ge)
		if c, ok := sameCell(&vlo, &vhi); ok {
			return c, nil
		}
	}
	return 0, fmt.Errorf("noise: exact lattice release: coordinate %d undecided after %d bits per deviate (an event of probability about 2^-%d)", i, maxExactBits, maxExactBits)
}

// sameCell reports whether every real in [lo, hi] has the same nearest
// integer c, i.e. c - 1/2 < lo and hi < c + 1/2, and returns c. The
// candidates are the integers next to lo; all comparisons are exact.
func sameCell(lo, hi *big.Float) (float64, bool) {
	if lo.IsInf() || hi.IsInf() {
		return 0, false
	}
	t, _ := lo.Int64() // truncation toward zero; saturates far out
	if t > 1<<60 || t < -1<<60 {
		return 0, false
	}
	var edge big.Float
	edge.SetPrec(128)
	for c := t - 1; c <= t+1; c++ {
		edge.SetInt64(2*c-1).SetMantExp(&edge, -1) // c - 1/2
		if lo.Cmp(&edge) <= 0 {
			continue
		}
		edge.SetInt64(2*c+1).SetMantExp(&edge, -1) // c + 1/2
		if hi.Cmp(&edge) < 0 {
			return float64(c), true
		}
	}
	return 0, false
}

// checkGrid validates the lattice step of AddOnGrid.
func checkGrid(g float64) error {
	if !(g >= minGrid && g <= maxGrid) || !isPowerOfTwo(g) {
		return paramError("grid", g, "a power of two in [2^-1000, 2^1000]")
	}
	return nil
}

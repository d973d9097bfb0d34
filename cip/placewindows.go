package cip

import (
	"container/heap"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// Every contiguous window at once (issue 31, item 5; docs/robust-cip.md
// section 5, "No Gaussian noise does it for less").
//
// For a window S = [a, b] the member's conditional mean v_S is 1 on S,
// after b the extension D+_b x_b of the state x_b = (1, m(a, b)) the
// Kalman recursion reaches at b (D+_b(i) = e1' A_(i-1)...A_b for i >= b),
// and before a the mirrored D-_a x'_a. With c_k the indicator of points 0
// to k:
//
//	v_S = c_(b-1) - c_a + D+_b x_b + D-_a x'_a = X_b beta + Y_a alpha,
//
// X_b = [c_(b-1), D+_b], beta = (1, x_b), Y_a = [c_a, D-_a], alpha = (-1,
// x'_a): d+1 columns that depend on b alone and d+1 on a alone. So
// v_S' H v_S (H = G^-1) needs the (d+1) x (d+1) blocks X_b'H X_b, Y_a'H Y_a
// and X_b'H Y_a. The recursions D+_b = e_b e1' + D+_(b+1) A_b and D-_a =
// e_a e1' + D-_(a-1) A_(a-1) carry H Y_a in O(n d^2) per a and X_b'(H Y_a)
// in O(d^3) per b: every window in O(n^2 d^3), after one factorisation
// and inverse of G.

// EveryWindowQuad calls visit with v_S' G^-1 v_S for every contiguous
// window S of times (n(n+1)/2 of them, v_S the member's conditional mean
// of the trace given f = 1 on S, as PlacesNoiseLowerBound takes it), G the
// trial noise (with the jitter gp.Factorize needs, if any). It is the
// bound on the loss factor the lower bound's upper end scales by, for
// every window instead of a chosen set.
func EveryWindowQuad(times []float64, mem PlaceLowerMember, trial mat.Symmetric, visit func(w PlaceWindow, q float64)) error {
	if err := checkLowerRequest(PlaceLowerRequest{Times: times, Members: []PlaceLowerMember{mem}, Windows: []PlaceWindow{{}}}); err != nil {
		return err
	}
	if trial.SymmetricDim() != len(times) {
		return param.Invalid("trial", float64(trial.SymmetricDim()), fmt.Sprintf("the trial noise must be %d x %d, one row per timestamp", len(times), len(times)))
	}
	lm, err := newLowerModel(mem, times)
	if err != nil {
		return err
	}
	f, err := gp.Factorize(trial, 0)
	if err != nil {
		return fmt.Errorf("trial noise: %w", err)
	}
	s := newWindowScan(f)
	s.run(lm, func(a, b int, q float64) { visit(PlaceWindow{First: a, Last: b}, q) })
	return nil
}

// windowScan holds H = G^-1 (full, row-major) for the every-window scan.
type windowScan struct {
	n int
	h []float64
	// plant, when not 0, scales D+_b's first derivative response by 1 +
	// plant (a wrong extension past the window; the tests' negative
	// control).
	plant float64
}

// newWindowScan inverts the factorised trial through its Cholesky factor
// (LAPACK's dpotri): the scan needs H's columns, and the trial's
// conditioning is that of the solves the per-window computation makes.
func newWindowScan(f *gp.Factor) *windowScan {
	n := f.Size()
	var inv mat.SymDense
	if err := f.Cholesky().InverseTo(&inv); err != nil {
		// A mat.Condition warning: the inverse is computed; the per-window
		// solves would be as ill-conditioned.
		_ = err
	}
	h := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			x := inv.At(i, j)
			h[i*n+j], h[j*n+i] = x, x
		}
	}
	return &windowScan{n: n, h: h}
}

func (s *windowScan) run(lm *lowerModel, visit func(a, b int, q float64)) {
	n, d, h := s.n, lm.d, s.h
	p := d + 1
	// back[tri(a, b)] is x'_a: the mirrored state at a given f = 1 on
	// [a, b], from one mirrored recursion per b.
	tri := func(a, b int) int { return (b*(b+1)/2 + a) * d }
	back := make([]float64, n*(n+1)/2*d)
	for b := range n {
		lm.condStates(b, 0, -1, func(a int, m []float64) { copy(back[tri(a, b):], m) })
	}
	// gbb[b] = X_b' H X_b, from a descending pass carrying D+_b and H D+_b.
	gbb := make([]float64, n*p*p)
	sc := make([]float64, n+1) // sc[b] = c_(b-1)' H c_(b-1)
	for b := range n {
		row := 0.0
		for i := range b {
			row += h[b*n+i]
		}
		sc[b+1] = sc[b] + 2*row + h[b*n+b]
	}
	dp := make([]float64, n*d)  // D+_b, rows i >= b
	hdp := make([]float64, n*d) // H D+_b
	tmp := make([]float64, d)
	for b := n - 1; b >= 0; b-- {
		if b < n-1 {
			a := lm.a[b]
			for i := b + 1; i < n; i++ {
				rowTimes(dp[i*d:(i+1)*d], a, tmp, d)
			}
			for i := range n {
				rowTimes(hdp[i*d:(i+1)*d], a, tmp, d)
			}
		}
		dp[b*d] = 1
		for i := range n {
			hdp[i*d] += h[i*n+b]
		}
		g := gbb[b*p*p : (b+1)*p*p]
		g[0] = sc[b]
		for k := range d {
			x := 0.0
			for i := range b {
				x += hdp[i*d+k]
			}
			g[1+k], g[(1+k)*p] = x, x
		}
		for j := range d {
			for k := range d {
				x := 0.0
				for i := b; i < n; i++ {
					x += dp[i*d+j] * hdp[i*d+k]
				}
				g[(1+j)*p+1+k] = x
			}
		}
	}
	// The ascending pass over a: D-_a, H c_a and H D-_a (Y_a = H [c_a,
	// D-_a], n x p), then every b >= a.
	dm := make([]float64, n*d)
	y := make([]float64, n*p)
	pre := make([]float64, (n+1)*p)
	gaa := make([]float64, p*p)
	fwd := make([]float64, n*d)
	z := make([]float64, d*p)
	zn := make([]float64, d*p)
	beta := make([]float64, p)
	alpha := make([]float64, p)
	kb := make([]float64, p*p)
	for a := range n {
		if a > 0 {
			am := lm.a[a-1]
			for i := range a {
				rowTimes(dm[i*d:(i+1)*d], am, tmp, d)
			}
			for i := range n {
				rowTimes(y[i*p+1:(i+1)*p], am, tmp, d)
			}
		}
		dm[a*d] = 1
		for i := range n {
			y[i*p] += h[i*n+a]
			y[i*p+1] += h[i*n+a]
		}
		// gaa = Y_a' H Y_a over rows i <= a (where c_a and D-_a live).
		clear(gaa)
		for i := 0; i <= a; i++ {
			yi := y[i*p : (i+1)*p]
			for k := range p {
				gaa[k] += yi[k]
			}
			for j := range d {
				dj := dm[i*d+j]
				if dj == 0 {
					continue
				}
				for k := range p {
					gaa[(1+j)*p+k] += dj * yi[k]
				}
			}
		}
		// Prefix sums of Y_a's rows: c_(b-1)' H Y_a = pre[b].
		for i := range n {
			for k := range p {
				pre[(i+1)*p+k] = pre[i*p+k] + y[i*p+k]
			}
		}
		lm.condStates(a, n-1, +1, func(b int, m []float64) { copy(fwd[b*d:(b+1)*d], m) })
		// Z_b = D+_b' H Y_a = e1 Y_a(b, :) + A_b' Z_(b+1), descending.
		clear(z)
		for b := n - 1; b >= a; b-- {
			if b < n-1 {
				smallMul(zn, lm.a[b], z, d, p, true)
				copy(z, zn)
			}
			for k := range p {
				z[k] += y[b*p+k]
			}
			copy(kb[:p], pre[b*p:(b+1)*p])
			copy(kb[p:], z)
			beta[0], alpha[0] = 1, -1
			copy(beta[1:], fwd[b*d:(b+1)*d])
			if s.plant != 0 && d > 1 {
				beta[2] *= 1 + s.plant
			}
			copy(alpha[1:], back[tri(a, b):tri(a, b)+d])
			q := quadForm(gbb[b*p*p:(b+1)*p*p], beta, p) + quadForm(gaa, alpha, p)
			cross := 0.0
			for j := range p {
				x := 0.0
				for k := range p {
					x += kb[j*p+k] * alpha[k]
				}
				cross += beta[j] * x
			}
			visit(a, b, q+2*cross)
		}
	}
}

// rowTimes replaces the row vector r by r A (A d x d row-major).
func rowTimes(r, a, tmp []float64, d int) {
	for k := range d {
		x := 0.0
		for l := range d {
			x += r[l] * a[l*d+k]
		}
		tmp[k] = x
	}
	copy(r, tmp)
}

// quadForm is x' G x for G p x p row-major, symmetric (only its upper
// triangle and diagonal are read).
func quadForm(g, x []float64, p int) float64 {
	s := 0.0
	for j := range p {
		s += g[j*p+j] * x[j] * x[j]
		for k := j + 1; k < p; k++ {
			s += 2 * g[j*p+k] * x[j] * x[k]
		}
	}
	return s
}

// worstWindows keeps, per member, the k windows of largest loss factor
// a scan visits (a min-heap), skipping the pairs already constrained.
type worstWindows struct {
	k     int
	items []scoredWindow
	skip  map[PlaceWindow]bool
	max   float64
	above int // windows whose factor exceeds the threshold
	thr   float64
}

type scoredWindow struct {
	w PlaceWindow
	q float64
}

func (h *worstWindows) visit(w PlaceWindow, q float64) {
	h.max = math.Max(h.max, q)
	if q > h.thr {
		h.above++
	}
	if h.skip[w] {
		return
	}
	if len(h.items) < h.k {
		heap.Push((*windowHeap)(&h.items), scoredWindow{w, q})
		return
	}
	if q <= h.items[0].q {
		return
	}
	h.items[0] = scoredWindow{w, q}
	heap.Fix((*windowHeap)(&h.items), 0)
}

// windowHeap is a min-heap of scored windows by q (container/heap).
type windowHeap []scoredWindow

func (w windowHeap) Len() int           { return len(w) }
func (w windowHeap) Less(i, j int) bool { return w[i].q < w[j].q }
func (w windowHeap) Swap(i, j int)      { w[i], w[j] = w[j], w[i] }
func (w *windowHeap) Push(x any)        { *w = append(*w, x.(scoredWindow)) }
func (w *windowHeap) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

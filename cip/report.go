package cip

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/param"
)

// ParseSecret reads a secret of 0-based point indices: "24" is the basic
// secret of point 24, "24,25" the compound secret of points 24 and 25. It
// is the index syntax of "tracepriv cip"; sanitize's secrets are times
// (sanitize.ParseSecretTimes). A spec that is not a list of integers is a
// *param.Error named "secret"; a secret outside the n points is Validate's
// error.
func ParseSecret(spec string, n int) (Secret, error) {
	var s Secret
	for _, f := range strings.Split(spec, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return Secret{}, &param.Error{Name: "secret", Value: spec, Why: fmt.Sprintf("%q is not an index", f)}
		}
		s.Indices = append(s.Indices, i)
	}
	if err := s.Validate(n); err != nil {
		return Secret{}, err
	}
	return s, nil
}

// ParseTimes reads a time axis: comma-separated finite numbers, each after
// the one before. A bad item is a *param.Error named "times".
func ParseTimes(s string) ([]float64, error) {
	var ts []float64
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &param.Error{Name: "times", Value: s, Why: fmt.Sprintf("item %d (%q) is not a finite number", i+1, f)}
		}
		if i > 0 && !(v > ts[i-1]) {
			return nil, &param.Error{Name: "times", Value: s, Why: fmt.Sprintf("item %d (%v) is not after item %d (%v)", i+1, v, i, ts[i-1])}
		}
		ts = append(ts, v)
	}
	return ts, nil
}

// RigidWindow is the loss of a window of points moved rigidly (a place, or
// with every point the route): against the prior's adversary who
// conditions on the window (RigidLossFactor), and against one who believes
// the person stood still there (StillLossFactor).
type RigidWindow struct {
	First           int      `json:"first"`
	Last            int      `json:"last"`
	Points          int      `json:"points"`
	LossFactor      float64  `json:"loss_factor"`
	StillLossFactor float64  `json:"stood_still_loss_factor"`
	Epsilon         *float64 `json:"epsilon,omitempty"`
	StillEpsilon    *float64 `json:"stood_still_epsilon,omitempty"`
}

// ParseWindow reads a window "FIRST:LAST" of 0-based point indices,
// inclusive, of an n-point trace. A bad window is a *param.Error named
// "rigid".
func ParseWindow(spec string, n int) (first, last int, err error) {
	a, b, ok := strings.Cut(spec, ":")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	j, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || i < 0 || j < i || j >= n {
		return 0, 0, &param.Error{Name: "rigid", Value: spec, Why: fmt.Sprintf("want FIRST:LAST, 0-based point indices with 0 <= FIRST <= LAST < %d", n)}
	}
	return i, j, nil
}

// AssessRigid returns the loss of points first..last moved rigidly under
// the prior sigma and the noise sigmaG. With lambda > 0 it also states the
// epsilons of a rigid move of up to radius in the plane: lambda/2 r^2 L.
func AssessRigid(sigma, sigmaG mat.Symmetric, first, last int, lambda, radius float64) (RigidWindow, error) {
	s := Secret{Indices: make([]int, 0, last-first+1)}
	for k := first; k <= last; k++ {
		s.Indices = append(s.Indices, k)
	}
	r := RigidWindow{First: first, Last: last, Points: last - first + 1}
	var err error
	if r.LossFactor, err = RigidLossFactor(sigma, sigmaG, s); err != nil {
		return r, err
	}
	if r.StillLossFactor, err = StillLossFactor(sigmaG, s); err != nil {
		return r, err
	}
	if lambda > 0 {
		e, es := Epsilon(r.LossFactor, lambda, radius, 1), Epsilon(r.StillLossFactor, lambda, radius, 1)
		r.Epsilon, r.StillEpsilon = &e, &es
	}
	return r, nil
}

// Report is an Assessment with what produced it: the designer and solver
// that ran (empty when the noise was given), the prior's kernel, the
// design's proven lower bound on the least budget (target mode), the
// windows moved rigidly and where the noise was written. It is the JSON
// of "tracepriv cip loss" and "cip design".
type Report struct {
	Method Method `json:"method,omitempty"`
	Solver string `json:"solver,omitempty"`
	Kernel string `json:"kernel"`
	*Assessment
	// LowerBound is the (E3) designer's proven lower bound on the least
	// budget that meets the target (target mode).
	LowerBound *float64      `json:"budget_lower_bound,omitempty"`
	NoiseFile  string        `json:"noise_file,omitempty"`
	Rigid      []RigidWindow `json:"rigid,omitempty"`
	Seconds    float64       `json:"seconds"`
}

// WriteText writes the report for people: the method and worst loss, each
// secret's (up to 20), each rigid window's, the jitter and the noise file.
func (r *Report) WriteText(w io.Writer) error {
	if r.Method != "" {
		fmt.Fprintf(w, "method %s", r.Method)
		if r.Solver != "" {
			fmt.Fprintf(w, " (solver %s)", r.Solver)
		}
		fmt.Fprint(w, ", ")
	}
	fmt.Fprintf(w, "kernel %s, n = %d, total noise tr(SigmaG) = %.6g\n", r.Kernel, r.N, r.Budget)
	fmt.Fprintf(w, "worst loss factor %.6g", r.LossFactor)
	if r.Epsilon != nil {
		fmt.Fprintf(w, ", epsilon %.6g at lambda %g, r %g", *r.Epsilon, *r.Lambda, *r.Radius)
	}
	fmt.Fprintf(w, "; posterior 2-sigma %.4g\n", r.Posterior2Sigma)
	if len(r.Secrets) <= 20 {
		for i, s := range r.Secrets {
			fmt.Fprintf(w, "  secret %v: loss factor %.6g", s.Indices, s.LossFactor)
			if s.Epsilon != nil {
				fmt.Fprintf(w, ", epsilon %.6g", *s.Epsilon)
			}
			if s.Gap != nil {
				fmt.Fprintf(w, ", prior-posterior gap %.6g at delta %g", *s.Gap, *r.Delta)
			}
			if i < len(r.BlockDiagonalBound) {
				fmt.Fprintf(w, " (Theorem 3.4 bound %.6g)", r.BlockDiagonalBound[i])
			}
			fmt.Fprintln(w)
		}
	}
	for _, x := range r.Rigid {
		fmt.Fprintf(w, "  points %d-%d moved rigidly: loss factor %.6g conditioned, %.6g stood still", x.First, x.Last, x.LossFactor, x.StillLossFactor)
		if x.Epsilon != nil {
			fmt.Fprintf(w, "; epsilon %.6g and %.6g", *x.Epsilon, *x.StillEpsilon)
		}
		fmt.Fprintln(w)
	}
	if r.Jitter > 0 {
		fmt.Fprintf(w, "  factorisation jitter %.3g (certified for SigmaG + jitter I)\n", r.Jitter)
	}
	if r.NoiseFile != "" {
		_, err := fmt.Fprintf(w, "  wrote %s\n", r.NoiseFile)
		return err
	}
	return nil
}

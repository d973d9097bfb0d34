package cip

import (
	"fmt"
	"slices"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// Secret is a set of coordinates of an unrolled trace whose values must be
// protected together: one location for a basic secret, several for a
// compound secret.
type Secret struct {
	// Indices are the coordinates, 0-based, distinct.
	Indices []int `json:"indices"`
	// KLoc is the number of locations the secret covers (S in Theorem 3.4:
	// the displacement bound is ||Delta||^2 <= KLoc r^2). Zero means
	// len(Indices), right for a 1-D trace.
	KLoc int `json:"k_loc,omitempty"`
}

// Basic returns the basic secret of location i.
func Basic(i int) Secret { return Secret{Indices: []int{i}} }

// Compound returns the compound secret of the given locations.
func Compound(idx ...int) Secret { return Secret{Indices: slices.Clone(idx)} }

// EveryPoint returns the n basic secrets of an n-point 1-D trace.
func EveryPoint(n int) []Secret {
	s := make([]Secret, n)
	// One backing array for all the index slices: a million secrets are
	// one allocation, not a million.
	idx := make([]int, n)
	for i := range s {
		idx[i] = i
		s[i] = Secret{Indices: idx[i : i+1 : i+1]}
	}
	return s
}

// NumLocations returns the number of locations the secret covers: KLoc,
// or len(Indices) if KLoc is zero.
func (s Secret) NumLocations() int {
	if s.KLoc > 0 {
		return s.KLoc
	}
	return len(s.Indices)
}

// Validate reports whether s is a valid secret of an n-coordinate trace.
func (s Secret) Validate(n int) error {
	if err := gp.CheckIndices(s.Indices, n); err != nil {
		return param.Wrap("secret", fmt.Sprint(s.Indices), err)
	}
	if s.KLoc < 0 {
		return param.Invalid("KLoc", s.KLoc, fmt.Sprintf("secret %v: the location count must be non-negative", s.Indices))
	}
	return nil
}

// Layout maps the points of a d-dimensional trace of N points to the
// coordinates of its unrolled vector, dimension-major: coordinate
// dim*Points + point. Following Corollary 7.2.1, tracepriv designs and
// accounts each dimension as an independent 1-D problem on the point
// indices; Layout is for code that needs the joint n = d N view.
type Layout struct {
	Points, Dims int
}

// Index returns the unrolled coordinate of point p in dimension d.
func (l Layout) Index(p, d int) int { return d*l.Points + p }

// Unroll returns the joint secret covering the given point secret in every
// dimension. KLoc stays the number of locations.
func (l Layout) Unroll(s Secret) Secret {
	out := Secret{KLoc: s.NumLocations()}
	for d := range l.Dims {
		for _, p := range s.Indices {
			out.Indices = append(out.Indices, l.Index(p, d))
		}
	}
	return out
}

// CombineDimensions returns the loss factor of a d-dimensional trace whose
// dimensions are independent and each carry an independent mechanism with
// the given per-dimension loss factors for the same point secret: the sum,
// as in Corollary 7.2.1. The sum is valid for displacements with every
// per-dimension component bounded by r (the box circumscribing the ball
// of radius r), so Epsilon(CombineDimensions(...), lambda, r, kLoc) is a
// valid epsilon for the d-dimensional secret. It is conservative: for
// displacements in the ball (||delta_k||_2 <= r per location) the exact
// joint loss factor of independent dimensions is the largest
// per-dimension factor, as (E1) on the unrolled problem confirms.
func CombineDimensions(factors ...float64) float64 {
	s := 0.0
	for _, f := range factors {
		s += f
	}
	return s
}

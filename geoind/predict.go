package geoind

import "time"

// Predictor is the prediction function Ω of the paper: a deterministic
// function of the public run (and the public time of the query) guessing
// the next reported value. ok is false when it cannot predict yet; the
// mechanism then skips the test and uses fresh noise (the "first step"
// skip strategy), since testing a missing prediction would waste budget.
type Predictor interface {
	Predict(r Run, t time.Time) (z Vec, ok bool)
}

// Parrot is the paper's eq. (7): the last reported value, which is always
// the last hard value (easy steps repeat it).
type Parrot struct{}

// Predict returns the last reported location.
func (Parrot) Predict(r Run, _ time.Time) (Vec, bool) {
	if r.lastHard() < 0 {
		return Vec{}, false
	}
	return r[len(r)-1].Z, true
}

// Linear extrapolates the last two hard values, 2z₁ - z₀ (Stronati's
// super_simple_prediction): the next hard release is guessed to lie as far
// beyond the last as the last lay beyond the one before. With a single
// hard value it behaves as Parrot.
type Linear struct{}

// Predict returns the linear extrapolation of the last two hard values.
func (Linear) Predict(r Run, _ time.Time) (Vec, bool) {
	i := r.lastHard()
	if i < 0 {
		return Vec{}, false
	}
	z1 := r[i].Z
	for j := i - 1; j >= 0; j-- {
		if r[j].Hard {
			z0 := r[j].Z
			return Vec{2*z1.X - z0.X, 2*z1.Y - z0.Y}, true
		}
	}
	return z1, true
}

package gp

import (
	"fmt"
	"slices"
	"time"
)

// Indices returns the sample indices 0, 1, ..., n-1 as kernel times, the
// time axis of Meehan and Chaudhuri's experiments.
func Indices(n int) []float64 {
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = float64(i)
	}
	return ts
}

// Seconds converts timestamps to seconds after the first one. It returns
// an error if the times are not strictly increasing, since a Gram matrix
// with repeated times is singular.
func Seconds(times []time.Time) ([]float64, error) {
	ts := make([]float64, len(times))
	for i, t := range times {
		ts[i] = t.Sub(times[0]).Seconds()
		if i > 0 && !(ts[i] > ts[i-1]) {
			return nil, fmt.Errorf("gp: time %d (%v) is not after time %d (%v)", i, t, i-1, times[i-1])
		}
	}
	return ts, nil
}

// MeanPeriod returns the mean sampling period of ts: (last - first)/(n-1).
func MeanPeriod(ts []float64) (float64, error) {
	if len(ts) < 2 {
		return 0, fmt.Errorf("gp: mean sampling period needs at least 2 times, got %d", len(ts))
	}
	p := (ts[len(ts)-1] - ts[0]) / float64(len(ts)-1)
	if !(p > 0) {
		return 0, fmt.Errorf("gp: times do not increase")
	}
	return p, nil
}

// MedianPeriod returns the median of the gaps between consecutive times,
// the "average sampling period" of Meehan and Chaudhuri's
// preprocess_geolife.py (which computes a median despite the name).
func MedianPeriod(ts []float64) (float64, error) {
	if len(ts) < 2 {
		return 0, fmt.Errorf("gp: median sampling period needs at least 2 times, got %d", len(ts))
	}
	d := make([]float64, len(ts)-1)
	for i := range d {
		d[i] = ts[i+1] - ts[i]
	}
	slices.Sort(d)
	m := d[len(d)/2]
	if len(d)%2 == 0 {
		m = (d[len(d)/2-1] + m) / 2
	}
	if !(m > 0) {
		return 0, fmt.Errorf("gp: median sampling period %v is not positive", m)
	}
	return m, nil
}

// EffectiveLengthscale returns l / period: a lengthscale in seconds
// expressed in samples, the l_eff of Meehan and Chaudhuri.
func EffectiveLengthscale(l, period float64) float64 { return l / period }

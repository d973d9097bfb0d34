// Package synth generates tracepriv's bundled sample corpus: made-up
// people on made-up routes, with GPS-like noise drawn from the bundled
// prior, so that the project can ship a sample it is free to redistribute
// (GeoLife's licence forbids redistributing its data; docs/datasets.md).
//
// Each trace is a route (stays, walks, a bus, a bicycle; piecewise linear
// in time on the tangent plane at the prior's public origin) plus, on each
// plane coordinate independently, a draw of the prior's nominal member (a
// Matérn kernel, drawn exactly at the fixes' timestamps through its
// state-space form) plus white GPS noise of GPSNoiseM. Fixes come every 1,
// 2 or 5 seconds, as a logger would take them, with a few lost at random
// and none during an outage. Coordinates are rounded to 1e-6 degrees and
// altitudes to whole feet, as GeoLife's PLT files hold them.
//
// Generation is seeded (Seed), so the committed files are reproducible:
// "go generate ./internal/sample" (or "go run ./internal/sample/gen -out
// internal/sample") rewrites them, and internal/sample's test checks that
// the committed files are what Generate gives. The seed makes it a
// reproducible synthetic data set, not a private release of anyone: no
// real person's data goes in.
package synth

import (
	"bytes"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// Seed is the seed of the committed sample corpus.
const Seed = 20240312

// GPSNoiseM is the standard deviation, in metres per plane coordinate, of
// the white noise added to every fix (a receiver's error beyond what the
// prior's smooth deviation describes).
const GPSNoiseM = 0.5

// groundAltM is the altitude of the made-up city, in metres.
const groundAltM = 44.0

// File is one generated trace and where it goes: Path is slash-separated
// and relative to the sample directory, "<person>/<name>.plt", so that the
// directory names the person of the sample read as a corpus
// (trace.PersonRule).
type File struct {
	Path  string
	Trace *trace.Trace
}

// xy is a position on the tangent plane, metres east and north of the
// origin.
type xy struct{ e, n float64 }

// leg is one part of an itinerary: a stay where the route ends so far, or
// a move through waypoints at a speed.
type leg struct {
	stay  time.Duration
	via   []xy
	speed float64 // metres per second
}

func stay(d time.Duration) leg          { return leg{stay: d} }
func move(speed float64, via ...xy) leg { return leg{via: via, speed: speed} }
func walk(via ...xy) leg                { return move(1.35, via...) }

// plan is one trace: a person, a start, a logging interval, an itinerary
// and the logger's losses.
type plan struct {
	uid, name string
	start     time.Time // UTC
	every     time.Duration
	from      xy
	legs      []leg
	drop      float64            // probability that a fix is lost
	outages   [][2]time.Duration // offsets from start without fixes
}

// Speeds in metres per second.
const (
	busSpeed  = 8.5
	bikeSpeed = 4.2
	parkWalk  = 1.2
)

// plans is the corpus: three made-up people in the city around the
// origin. Times are UTC (China Standard Time is UTC+8).
func plans() []plan {
	home1, work1, cafe := xy{-2650, 3180}, xy{1180, 1620}, xy{1650, 1050}
	home2, work2 := xy{3900, -2100}, xy{1300, 1150}
	gate := xy{-900, -1400}
	day := func(d, h, m, s int) time.Time { return time.Date(2024, 3, d, h, m, s, 0, time.UTC) }
	return []plan{{
		// Home, a walk to the bus stop, the bus (the logger is switched
		// off on the way to work). Short (under 285 fixes), so that the
		// online mechanisms' tests at --rate 0.0035 cover every fix and
		// dense attacks on it stay quick.
		uid: "synth-1", name: "commute", start: day(12, 0, 5, 17), every: 5 * time.Second, from: home1, drop: 0.03,
		legs: []leg{
			stay(14 * time.Minute),
			walk(xy{-2650, 2900}, xy{-2580, 2900}),
			stay(50 * time.Second),
			move(busSpeed, xy{-1200, 2900}), stay(20 * time.Second),
			move(busSpeed, xy{-700, 2900}),
		},
	}, {
		// A lunch walk to a café and back another way; no fix indoors for a while.
		uid: "synth-1", name: "lunch", start: day(12, 4, 11, 42), every: 5 * time.Second, from: work1, drop: 0.03,
		outages: [][2]time.Duration{{14 * time.Minute, 18 * time.Minute}},
		legs: []leg{
			walk(xy{1180, 1300}, xy{1650, 1300}, cafe),
			stay(16 * time.Minute),
			walk(xy{1400, 1050}, xy{1400, 1620}, work1),
		},
	}, {
		// Home, a bicycle to work with two red lights, work.
		uid: "synth-2", name: "cycle", start: day(13, 0, 21, 36), every: 2 * time.Second, from: home2, drop: 0.02,
		legs: []leg{
			stay(5 * time.Minute),
			move(bikeSpeed, xy{3900, -600}, xy{2400, -600}), stay(40 * time.Second),
			move(bikeSpeed, xy{2400, 900}), stay(35 * time.Second),
			move(bikeSpeed, xy{1300, 900}, work2),
			stay(2 * time.Minute),
		},
	}, {
		// A walk around a park at 1 Hz, with a rest on a bench.
		uid: "synth-3", name: "walk", start: day(16, 6, 40, 3), every: time.Second, from: gate, drop: 0.01,
		legs: []leg{
			move(parkWalk, xy{-900, -1050}, xy{-600, -1050}),
			stay(4 * time.Minute),
			move(parkWalk, xy{-600, -1400}, gate),
		},
	}}
}

// knot is a point of a route at a time offset in seconds.
type knot struct {
	t float64
	p xy
}

// route returns the knots of a plan's itinerary.
func (pl plan) route() ([]knot, error) {
	ks := []knot{{0, pl.from}}
	for i, l := range pl.legs {
		last := ks[len(ks)-1]
		switch {
		case l.stay > 0:
			ks = append(ks, knot{last.t + l.stay.Seconds(), last.p})
		case len(l.via) > 0 && l.speed > 0:
			for _, p := range l.via {
				last = ks[len(ks)-1]
				d := math.Hypot(p.e-last.p.e, p.n-last.p.n)
				ks = append(ks, knot{last.t + d/l.speed, p})
			}
		default:
			return nil, fmt.Errorf("synth: %s/%s: leg %d is neither a stay nor a move", pl.uid, pl.name, i+1)
		}
	}
	return ks, nil
}

// at interpolates the route linearly at offset t (seconds).
func at(ks []knot, t float64) xy {
	for i := 1; i < len(ks); i++ {
		if t <= ks[i].t {
			a, b := ks[i-1], ks[i]
			if b.t == a.t {
				return b.p
			}
			f := (t - a.t) / (b.t - a.t)
			return xy{a.p.e + f*(b.p.e-a.p.e), a.p.n + f*(b.p.n-a.p.n)}
		}
	}
	return ks[len(ks)-1].p
}

// Generate returns the sample corpus drawn with seed: the routes above,
// around prior's origin, each plane coordinate deviating from its route by
// a draw of prior's nominal member (which must be a Matérn kernel with a
// state-space form) plus white noise of GPSNoiseM. Each trace draws from
// its own stream (the seed and its path), so editing one plan leaves the
// others as they are.
func Generate(prior *prior.Prior, seed uint64) ([]File, error) {
	if prior == nil || prior.Origin == nil {
		return nil, fmt.Errorf("synth: the prior has no public origin to place the routes around")
	}
	k, err := prior.KernelFunc()
	if err != nil {
		return nil, err
	}
	model, err := gp.StateSpace(k)
	if err != nil {
		return nil, fmt.Errorf("synth: the prior's nominal member: %w", err)
	}
	enu := geo.NewENU(geo.Point{Lat: prior.Origin.Lat, Lon: prior.Origin.Lon})
	var files []File
	for _, pl := range plans() {
		path := pl.uid + "/" + pl.name + ".plt"
		src := noise.Derive(noise.Seeded(seed), path)
		ks, err := pl.route()
		if err != nil {
			return nil, err
		}
		ts := pl.times(ks[len(ks)-1].t, src)
		dev := [2][]float64{draw(model, ts, src), draw(model, ts, src)}
		t := &trace.Trace{UID: pl.uid, Name: path}
		for i, s := range ts {
			r := at(ks, s)
			p := enu.Inverse(r.e+dev[0][i]+GPSNoiseM*normal(src), r.n+dev[1][i]+GPSNoiseM*normal(src))
			altFt := math.Round((groundAltM + 2.5*normal(src)) / 0.3048)
			t.Points = append(t.Points, trace.Point{
				Time: pl.start.Add(time.Duration(s) * time.Second),
				Lat:  math.Round(p.Lat*1e6) / 1e6, Lon: math.Round(p.Lon*1e6) / 1e6,
				Alt: altFt * 0.3048,
			})
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("synth: %s: %w", path, err)
		}
		files = append(files, File{Path: path, Trace: t})
	}
	return files, nil
}

// times returns the offsets (whole seconds) of the fixes a logger taking
// one every pl.every keeps over [0, end]: all but those lost at random
// (probability pl.drop) or during an outage. The first and last fixes are
// always kept, so the trace spans its itinerary.
func (pl plan) times(end float64, src noise.Source) []float64 {
	step := pl.every.Seconds()
	n := int(end / step)
	var ts []float64
	for i := 0; i <= n; i++ {
		s := float64(i) * step
		lost := i > 0 && i < n && noise.Uniform(src) < pl.drop
		for _, o := range pl.outages {
			if s >= o[0].Seconds() && s < o[1].Seconds() {
				lost = true
			}
		}
		if !lost {
			ts = append(ts, s)
		}
	}
	return ts
}

// draw returns a draw of the state-space GP model at times ts (seconds,
// increasing): the stationary state at the first time, then the exact
// transition and its process noise between consecutive times.
func draw(m *gp.StateModel, ts []float64, src noise.Source) []float64 {
	d := m.StateDim()
	state := mulChol(m.Pinf(), normals(d, src))
	out := make([]float64, len(ts))
	out[0] = state[0]
	for i := 1; i < len(ts); i++ {
		a, q := m.Transition(ts[i] - ts[i-1])
		next := mulChol(q, normals(d, src))
		for r := range d {
			for c := range d {
				next[r] += a.At(r, c) * state[c]
			}
		}
		state = next
		out[i] = state[0]
	}
	return out
}

// mulChol returns L z for the lower Cholesky factor L of the covariance
// c, treating directions of (numerically) zero variance as zero.
func mulChol(c *mat.SymDense, z []float64) []float64 {
	d := c.SymmetricDim()
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		// Positive semi-definite within rounding: nudge the diagonal by a
		// relative 1e-12, far below a millimetre.
		j := mat.NewSymDense(d, nil)
		j.CopySym(c)
		for i := range d {
			j.SetSym(i, i, j.At(i, i)*(1+1e-12)+1e-300)
		}
		if !ch.Factorize(j) {
			return make([]float64, d)
		}
	}
	var l mat.TriDense
	ch.LTo(&l)
	out := make([]float64, d)
	for r := range d {
		for c := 0; c <= r; c++ {
			out[r] += l.At(r, c) * z[c]
		}
	}
	return out
}

func normals(n int, src noise.Source) []float64 {
	z := make([]float64, n)
	for i := range z {
		z[i] = normal(src)
	}
	return z
}

// normal is a standard normal draw by the Box–Muller transform of two
// noise.Uniform draws: unlike math/rand's ziggurat, its values depend only
// on the stream and package math, so the committed sample stays
// reproducible.
func normal(src noise.Source) float64 {
	u1, u2 := noise.Uniform(src), noise.Uniform(src)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// WalkPLT is a made-up person's trace of n fixes at 1 Hz in Beijing, as
// PLT: a meander at walking to cycling speed with stops, deterministic
// (no draw), the on-device benchmarks' and tests' walk.
func WalkPLT(n int) ([]byte, error) {
	tr := &trace.Trace{UID: "walker"}
	t0 := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	lat, lon := 39.9842, 116.3184
	for i := range n {
		v := 3 * math.Max(0, math.Sin(float64(i)/900)) // m/s, with stops
		h := float64(i) / 400
		lat += v * math.Cos(h) / 111_000
		lon += v * math.Sin(h) / 85_000
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * time.Second), Lat: lat, Lon: lon, Alt: math.NaN()})
	}
	var b bytes.Buffer
	if err := trace.Write(&b, []*trace.Trace{tr}, trace.PLT); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

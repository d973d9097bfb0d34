package sanitize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// Designers, the values of Options.Design and Certificate.Design: the
// designers of package cip (cip.Method) that a release runs, so that a
// certificate and "tracepriv cip design" name a design alike. DesignAuto's
// rule is sanitize's own: it also decides for prior families and secret
// specs, which cip.DesignNoise does not see. cip's paper designers are for
// reproductions and are refused here.
const (
	// DesignAuto picks DesignProportional for a single-lengthscale family
	// with every point a secret, DesignE3 for a single-lengthscale family
	// with listed secrets, and DesignEnvelope otherwise.
	DesignAuto = cip.MethodAuto
	// DesignEnvelope: noise whose spectral density dominates every member
	// of the family (cip.Envelope); epsilon is a proven upper bound over
	// the family (exact only where the bound is attained).
	DesignEnvelope = cip.MethodEnvelope
	// DesignProportional: noise proportional to the single prior's Gram
	// matrix, the least noise when every point is a basic secret; exact.
	DesignProportional = cip.MethodProportional
	// DesignE3: the least-noise design (E3) of cip.OptimalTarget (or (E2)
	// for one basic secret) for a single-lengthscale family; exact (E1).
	DesignE3 = cip.MethodE3
)

// Path is how a release computes and samples its noise: the dense path
// through the covariance matrix, or the linear path through the noise
// kernel's state-space form. It is Options.Path and Certificate.Path (the
// certificate's "path", the command line's --path; both were "method"
// before certificate version 5). The path changes the computation, not the guarantee. It keeps
// the design too, but for proportional noise of an RBF prior, which has no
// state-space form: on the linear path it becomes the state-space envelope
// of that lengthscale (Certificate.Design says which design ran).
type Path string

// The computation paths.
const (
	// PathAuto is PathLinear when the noise kernel has a state-space form
	// (a spectral envelope, or a Matérn prior), and PathDense otherwise
	// (the e3 design, or proportional noise for an RBF or periodic prior
	// of one lengthscale; an RBF person too large for the dense path gets
	// the state-space envelope of that lengthscale).
	PathAuto Path = "auto"
	// PathDense builds the noise covariance and samples it through a
	// certified Cholesky factor: O(n^3) time, O(n^2) memory per person.
	PathDense Path = "dense"
	// PathLinear samples a state-space noise kernel by an exact
	// Kalman-type recursion (noise.MarkovRelease): O(n) time and memory.
	PathLinear Path = "linear"
)

// DefaultDelta is the delta at which a certificate states the
// prior-posterior gap when Options.Delta is zero; the command-line flags
// --delta default to it.
const DefaultDelta = 1e-5

// OutputGrid is the grid, in metres of Earth-centred coordinates, the
// released positions are rounded to before they are projected to the
// surface: 2^-10 m, about a millimetre, far below GPS resolution and far
// above the error of the noise computation, so the exact sampler
// (noise.MultiNormal.AddOnGrid) rarely needs to refine. Coordinates of up
// to 6.4e6 m are 6.5e9 grid steps: exact in float64.
const OutputGrid = 0x1p-10

// MaxNoiseStd is the largest noise standard deviation per coordinate, in
// metres, a release accepts: beyond it the projection to the surface no
// longer keeps the noise's shape (and the release would be useless anyway).
const MaxNoiseStd = 100_000.0

// CoordinatesECEF is Certificate.Coordinates of a release noised in
// Earth-centred, Earth-fixed coordinates (every release since certificate
// version 4).
const CoordinatesECEF = "ecef-wgs84"

// OriginNone is geo.Origin.Source when neither the user nor the prior
// gives a reference point (the release needs none).
const OriginNone = "none"

// Dims is the number of coordinates noised: the Earth-centred, Earth-fixed
// (ECEF) x, y and z of every point, each with independent noise of the same
// covariance. No origin or plane is involved, so nothing about where the
// person is chooses a parameter of the mechanism, and a person who travels
// across a continent is released like one who stays in a city.
const Dims = 3

// ecefHook, set only by tests, sees each release in ECEF (after the noise,
// before the projection to the surface) beside the input's ECEF.
var ecefHook func(in, out [Dims][]float64)

// toECEF returns the ECEF coordinates of pts, one slice per axis.
func toECEF(n int, at func(i int) geo.Point) [Dims][]float64 {
	var c [Dims][]float64
	for d := range c {
		c[d] = make([]float64, n)
	}
	for i := range n {
		c[0][i], c[1][i], c[2][i] = geo.ECEF(at(i))
	}
	return c
}

// fromECEF projects released point i to the surface (post-processing).
func fromECEF(c [Dims][]float64, i int) (geo.Point, error) {
	r := geo.FromECEF(c[0][i], c[1][i], c[2][i])
	if math.IsNaN(r.Lat) || math.IsNaN(r.Lon) || math.IsInf(r.Lat, 0) || math.IsInf(r.Lon, 0) {
		return r, fmt.Errorf("point %d: the release is not finite (%v, %v)", i+1, r.Lat, r.Lon)
	}
	return r, nil
}

// DefaultMaxDensePoints is the largest number of points of one person the
// dense designs and sampler accept (memory grows as its square).
const DefaultMaxDensePoints = 12_000

// Options configures Release.
type Options struct {
	// Prior is the public prior family of each metric dimension.
	Prior *prior.Prior
	// Epsilon is the target Rényi CIP loss at order Lambda > 1 for every
	// secret, against displacements of each secret location by up to
	// Radius metres.
	Epsilon, Lambda, Radius float64
	// Secrets lists the secrets as sets of timestamps (each inner slice
	// one secret: one time for a basic secret, several for a compound
	// one); nil means every point is a basic secret. Every time must be a
	// point of the trace. Listed secrets need an input of one person.
	Secrets [][]time.Time
	// Delta is the delta at which the certificate states the
	// prior-posterior gap of Theorem 3.1 (zero means DefaultDelta).
	Delta float64
	// Origin is a public reference point recorded in the certificate for
	// maps and attacks (nil means the prior's, if any). The mechanism does
	// not use it: noise is drawn in Earth-centred coordinates (Dims).
	Origin *geo.Point
	// Design is one of the Design constants; "" means DesignAuto.
	Design cip.Method
	// Path is one of the Path constants; "" means PathAuto.
	Path Path
	// ListSecrets lists every secret in the certificate even when every
	// point is a secret (listed secrets are always listed).
	ListSecrets bool
	// MaxDensePoints bounds the points of one person (default
	// DefaultMaxDensePoints).
	MaxDensePoints int
	// Source is the random source; nil means crypto/rand. A seeded source
	// gives each person the stream noise.Derive(Source, uid).
	Source noise.Source
	// Workers bounds the goroutines one person's linear-path sampling
	// uses; zero means GOMAXPROCS.
	Workers int
	// Progress, if set, is told the stage being worked on.
	Progress func(stage string)
	// PriorCorpus is the prior's private corpus index, which "tracepriv
	// fit" writes beside the prior (prior.CorpusIndexPath) and whose digest
	// the prior records: the release is refused when a fix of the input is
	// one of the corpus's (docs/fit.md). Nil checks nothing for a version
	// 4 prior (PriorIndexMissing); a prior of version 3 or below is checked
	// by the whole-trace fingerprints it records.
	PriorCorpus *trace.CorpusIndex
	// AllowPriorOverlap releases even when the prior's fitting corpus
	// shares data with a person of the input: the certificate then says
	// that person's classes are not covered (PriorOverlapOverridden).
	// Without it such a release is refused.
	AllowPriorOverlap bool
	// PointsOnly certifies the points (or listed secrets) alone: no
	// noise is added for places and the route, and the certificate says
	// they are not covered. The default protects all three.
	PointsOnly bool
	// PlacesEveryLength certifies places against the conditioning members
	// of every lengthscale of the family (Matérn 1/2, 3/2, 5/2), windows of
	// any duration, not only those at least as long as the window: the
	// noise is scaled until cip.PlaceConditionalBound meets the target
	// (docs/robust-cip.md, section 5). It costs noise: on a 1,000-point
	// GeoLife trace at epsilon 1, lambda 2, r = 100 m, see BENCHMARKS.md.
	PlacesEveryLength bool
	// Ledger is what the certificate states of the budget ledger the
	// release is charged in (Certificate.Ledger): the ledger file's base
	// name, budget.Off, or budget.Seeded. It does not change the noise.
	Ledger string

	// noiseFactor in (0, 1) scales each person's drawn noise down after
	// sampling: NOT PRIVATE, the weakened build only AuditNoise makes (it
	// never returns the release). Unexported, so no caller outside this
	// package can set it.
	noiseFactor float64
	// ecefTap, set only by AuditNoise, sees each person's timestamps
	// (seconds from their first) and ECEF coordinates before and after
	// the noise.
	ecefTap func(uid string, ts []float64, in, out [Dims][]float64)
}

func (o *Options) check() error {
	if o.Prior == nil {
		return &param.Error{Name: "prior", Value: nil, Why: "a prior file is required (tracepriv fit writes one)"}
	}
	if err := o.Prior.Validate(); err != nil {
		return param.Wrap("prior", "", err)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(o.Epsilon > 0) || !finite(o.Epsilon):
		return &param.Error{Name: "epsilon", Value: o.Epsilon, Why: "must be positive and finite"}
	case !(o.Lambda > 1) || !finite(o.Lambda):
		return &param.Error{Name: "lambda", Value: o.Lambda, Why: "the Rényi order must be finite and > 1"}
	case !(o.Radius > 0) || !finite(o.Radius):
		return &param.Error{Name: "radius", Value: o.Radius, Why: "must be positive and finite (metres)"}
	}
	// The least noise any design needs, a point's basic secret's
	// (standard deviation r sqrt(lambda/(2 epsilon)) per coordinate,
	// docs/cip-math.md), must be one a release can carry: at most
	// MaxNoiseStd, and at least the OutputGrid it is rounded to (where the
	// target loss factor 2 epsilon/(lambda r^2) is still a number).
	if sd := o.Radius * math.Sqrt(o.Lambda/(2*o.Epsilon)); !(sd <= MaxNoiseStd && sd >= OutputGrid) {
		// Name the flag that is off the scale (epsilon unless the radius is
		// below the grid or lambda absurd), with the ranges of epsilon and
		// the radius at the other two.
		k := math.Sqrt(2 * o.Epsilon / o.Lambda) // radius per metre of noise
		r2 := o.Radius * o.Radius
		name, v := "epsilon", o.Epsilon
		switch {
		case o.Radius < OutputGrid:
			name, v = "radius", o.Radius
		case o.Lambda > 1e6:
			name, v = "lambda", o.Lambda
		}
		return &param.Error{Name: name, Value: v, Why: fmt.Sprintf(
			"with --epsilon %g --lambda %g --radius %g the least noise any design needs would have a standard deviation of %.3g m per coordinate (r sqrt(lambda/(2 epsilon))), outside the %.2g mm to %g km a release carries: give an epsilon from %.3g to %.3g at this radius, or a radius from %.3g to %.3g m at this epsilon (lambda 2 is usual)",
			o.Epsilon, o.Lambda, o.Radius, sd, OutputGrid*1000, MaxNoiseStd/1000,
			o.Lambda*r2/(2*MaxNoiseStd*MaxNoiseStd), o.Lambda*r2/(2*OutputGrid*OutputGrid), OutputGrid*k, MaxNoiseStd*k)}
	}
	if o.Delta == 0 {
		o.Delta = DefaultDelta
	}
	if !(o.Delta > 0 && o.Delta < 1) {
		return &param.Error{Name: "delta", Value: o.Delta, Why: "must be in (0, 1)"}
	}
	switch o.Design {
	case "":
		o.Design = DesignAuto
	case DesignAuto, DesignEnvelope, DesignProportional, DesignE3:
	default:
		return &param.Error{Name: "design", Value: o.Design, Why: "one of auto, envelope, proportional, e3"}
	}
	switch o.Path {
	case "":
		o.Path = PathAuto
	case PathAuto, PathDense, PathLinear:
	default:
		// Named as the flag --method, which sets it.
		return &param.Error{Name: "path", Value: o.Path, Why: "one of auto, dense, linear"}
	}
	if o.MaxDensePoints == 0 {
		o.MaxDensePoints = DefaultMaxDensePoints
	}
	if o.Source == nil {
		o.Source = noise.Secure()
	}
	return nil
}

// design resolves DesignAuto for a family and a secret spec.
func (o *Options) design(f prior.FamilySet) (cip.Method, error) {
	m := o.Design
	if m == DesignAuto {
		switch {
		case !f.Single():
			m = DesignEnvelope
		case o.Secrets == nil:
			m = DesignProportional
		default:
			m = DesignE3
		}
	}
	if m != DesignEnvelope && !f.Single() {
		return "", &param.Error{Name: "design", Value: m, Why: fmt.Sprintf("needs a single-lengthscale prior; the prior is the family %v (use envelope)", f)}
	}
	if m == DesignProportional && o.Secrets != nil {
		return "", &param.Error{Name: "design", Value: m, Why: "protects every point; listed secrets need e3 or envelope"}
	}
	return m, nil
}

// path resolves the computation path for a design, given the largest
// person's points, and returns the design to use (the proportional design
// of an RBF or periodic prior has no state-space form: on the linear path
// it becomes the state-space envelope of its one lengthscale).
func (o *Options) path(f prior.FamilySet, design cip.Method, maxPoints int) (Path, cip.Method, error) {
	stateSpace := false
	if k, err := f.Kernels[0].Member(1, f.Kernels[0].LengthscaleMin); err == nil && len(f.Kernels) == 1 {
		_, err := gp.StateSpace(k)
		stateSpace = err == nil
	}
	m := o.Path
	if m == PathAuto {
		switch {
		case design == DesignE3:
			m = PathDense
		case design == DesignProportional && !stateSpace && maxPoints <= o.MaxDensePoints:
			m = PathDense
		default:
			m = PathLinear
		}
	}
	switch {
	case m == PathLinear && design == DesignE3:
		return "", "", &param.Error{Name: "path", Value: m, Why: "the e3 design is dense; use --design envelope for the linear path"}
	case m == PathLinear && design == DesignProportional && !stateSpace:
		if f.Kernels[0].Kernel == gp.KernelPeriodic {
			return "", "", &param.Error{Name: "path", Value: m, Why: "a periodic prior has no state-space form; use the dense path"}
		}
		design = DesignEnvelope
	case m == PathDense && maxPoints > o.MaxDensePoints:
		return "", "", &param.Error{Name: "path", Value: m, Why: fmt.Sprintf("a person has %d points, above the %d of the dense path (its memory grows as their square): use the linear path", maxPoints, o.MaxDensePoints)}
	}
	return m, design, nil
}

// Trace sanitises one trace, as the only trace of its person.
func Trace(t *trace.Trace, opt Options) (*trace.Trace, *Certificate, error) {
	outs, c, err := Release([]*trace.Trace{t}, opt)
	if err != nil {
		return nil, nil, err
	}
	return outs[0], c, nil
}

// person is one privacy unit: the points of all traces of one uid, in
// time order.
type person struct {
	uid    string
	traces []int
	pts    []trace.Point
	owner  []int // trace index of each point
	pos    []int // index of each point in its trace
}

// group collects the traces of each uid, in order of first appearance.
func group(traces []*trace.Trace) ([]*person, error) {
	var out []*person
	by := map[string]*person{}
	for i, t := range traces {
		if t.Len() == 0 {
			return nil, fmt.Errorf("trace %d (%s) is empty", i+1, t.Name)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("trace %d (%s): %w", i+1, t.Name, err)
		}
		p := by[t.UID]
		if p == nil {
			p = &person{uid: t.UID}
			by[t.UID] = p
			out = append(out, p)
		}
		p.traces = append(p.traces, i)
		for j, q := range t.Points {
			p.pts, p.owner, p.pos = append(p.pts, q), append(p.owner, i), append(p.pos, j)
		}
	}
	for _, p := range out {
		ord := make([]int, len(p.pts))
		for i := range ord {
			ord[i] = i
		}
		sort.SliceStable(ord, func(a, b int) bool { return p.pts[ord[a]].Time.Before(p.pts[ord[b]].Time) })
		pts, owner, pos := make([]trace.Point, len(ord)), make([]int, len(ord)), make([]int, len(ord))
		for k, i := range ord {
			pts[k], owner[k], pos[k] = p.pts[i], p.owner[i], p.pos[i]
			if k > 0 && pts[k].Time.Equal(pts[k-1].Time) {
				return nil, fmt.Errorf("person %q: traces %d and %d both have a point at %s; a person is at one place at a time (merge the traces or drop one point)",
					p.uid, owner[k-1]+1, owner[k]+1, pts[k].Time.Format(time.RFC3339Nano))
			}
		}
		p.pts, p.owner, p.pos = pts, owner, pos
	}
	return out, nil
}

// Release sanitises traces of any number of people. The privacy unit is the
// person: traces are grouped by UID, and each person's points (over all
// their traces) are designed for, certified and perturbed jointly, so the
// certificate's epsilon is per person. The returned traces are in input
// order, with the input's timestamps, sanitised positions, and no altitude
// or attributes.
func Release(traces []*trace.Trace, opt Options) ([]*trace.Trace, *Certificate, error) {
	return ReleaseContext(context.Background(), traces, opt)
}

// release is ReleaseContext's work; ctx is checked at every stage and
// inside the long ones (see ReleaseContext). Each person is designed,
// certified and drawn before the next, so that only one person's noise
// design is held at a time (Prepare holds every person's).
func release(ctx context.Context, traces []*trace.Trace, opt Options) ([]*trace.Trace, *Certificate, error) {
	start := time.Now()
	s, err := begin(ctx, traces, &opt)
	if err != nil {
		return nil, nil, err
	}
	if s.cert.PriorCoverage, s.d.overlap, err = checkPrior(opt, s.ids(), traces); err != nil {
		return nil, nil, err
	}
	s.cert.Guarantee = guarantee(s.cert)
	outs := newOutputs(traces)
	for _, p := range s.persons {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		pd, err := s.d.plan(p, traces, s.step)
		if err == nil {
			err = s.d.draw(pd, p, outs)
		}
		if err != nil {
			return nil, nil, s.personError(p, err)
		}
		s.cert.add(pd.pc)
	}
	if err := s.cert.finish(start); err != nil {
		return nil, nil, err
	}
	return outs, s.cert, nil
}

// setup is what a release shares before its persons: the checked
// options' designer, the certificate without persons, the persons in
// order of first appearance and the progress callback.
type setup struct {
	d       *designer
	cert    *Certificate
	persons []*person
	step    func(string)
}

// begin checks opt (in place) and groups traces into persons, reading
// only their uids, names and timestamps for the design: the common start
// of Release and Prepare.
func begin(ctx context.Context, traces []*trace.Trace, opt *Options) (*setup, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if len(traces) == 0 {
		return nil, errors.New("no trace")
	}
	o := *opt
	step := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	persons, err := group(traces)
	if err != nil {
		return nil, err
	}
	if opt.Secrets != nil && len(persons) > 1 {
		return nil, &param.Error{Name: "secrets", Value: len(opt.Secrets), Why: fmt.Sprintf("listed secrets need an input with one person; it has %d (uids %s)", len(persons), uids(persons))}
	}
	maxPoints := 0
	for _, p := range persons {
		maxPoints = max(maxPoints, len(p.pts))
	}
	d, cert, err := prepare(ctx, *opt, maxPoints, step)
	if err != nil {
		return nil, err
	}
	return &setup{d: d, cert: cert, persons: persons, step: step}, nil
}

// ids are the persons' uids in order.
func (s *setup) ids() []string {
	ids := make([]string, len(s.persons))
	for i, p := range s.persons {
		ids[i] = p.uid
	}
	return ids
}

// personError names the person of err when the input has several, or a
// uid.
func (s *setup) personError(p *person, err error) error {
	if len(s.persons) > 1 || p.uid != "" {
		return fmt.Errorf("person %q: %w", p.uid, err)
	}
	return err
}

// newOutputs allocates the released traces of traces: same uids, names
// and lengths, points to be written by the draw.
func newOutputs(traces []*trace.Trace) []*trace.Trace {
	outs := make([]*trace.Trace, len(traces))
	for i, t := range traces {
		outs[i] = &trace.Trace{UID: t.UID, Name: t.Name, Points: make([]trace.Point, t.Len())}
	}
	return outs
}

// prepare resolves what every person of a release shares (the public
// origin, the design and the computation path for persons of up to
// maxPoints points, the envelope) and returns the designer and the
// certificate without its persons. opt must have been checked.
func prepare(ctx context.Context, opt Options, maxPoints int, step func(string)) (*designer, *Certificate, error) {
	var pubOrigin *geo.Point
	note := ""
	if o := opt.Prior.Origin; o != nil {
		pubOrigin, note = &geo.Point{Lat: o.Lat, Lon: o.Lon}, o.Note
	}
	origin, err := geo.PublicOrigin(opt.Origin, pubOrigin, note)
	if errors.Is(err, geo.ErrNoOrigin) {
		origin, err = geo.Origin{Source: OriginNone}, nil
	}
	if err != nil {
		return nil, nil, param.Wrap("origin", opt.Origin, err)
	}
	fam := opt.Prior.Families()
	design, err := opt.design(fam)
	if err != nil {
		return nil, nil, err
	}
	path, design, err := opt.path(fam, design, maxPoints)
	if err != nil {
		return nil, nil, err
	}
	d := &designer{opt: opt, family: fam, kind: design, linear: path == PathLinear, ctx: ctx}
	if design == DesignEnvelope || design == DesignProportional {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		step("envelope")
		d.envOpt = cip.EnvelopeOptions{StateSpace: d.linear, PlaceScaled: opt.placeScaled(design)}
		if d.env, err = cip.NewEnvelope(fam, &d.envOpt); err != nil {
			return nil, nil, err
		}
	}
	cert := &Certificate{
		Version: CertificateVersion, PrivacyUnit: "person", SkippedByReason: map[string]int{},
		EpsilonTarget: opt.Epsilon, Lambda: opt.Lambda, RadiusM: opt.Radius, Delta: opt.Delta,
		PriorFamily: fam, Prior: publicPrior(opt.Prior), Origin: origin, Coordinates: CoordinatesECEF, Design: design, Path: path,
		OutputGridM: OutputGrid, Randomness: noise.Describe(opt.Source), Sampler: samplerText[path], Ledger: opt.Ledger,
		Private: noise.IsSecure(opt.Source), PriorCoverage: PriorUnknown, RouteKernel: KernelTermOf(cip.RouteKernel()), PointsOnly: opt.PointsOnly,
		Timestamps: "public: released as they are; the noise depends on them",
		Dimensions: "the Earth-centred, Earth-fixed x, y and z of every point (metres, WGS84, no origin) get independent noise of the same covariance, " +
			"and the noisy point is projected to the surface (post-processing); the prior on the three coordinates may correlate them in any way " +
			"(any 3x3 cross-coordinate covariance, including the degenerate ones of points on a surface: it cancels from the bound); " +
			"epsilon is for displacements within radius_m in ECEF, and the straight line between two places is never longer than the way on the ground, " +
			"so this covers displacements of radius_m on the ground, anywhere on Earth; epsilon_sum_of_dimensions is Corollary 7.2.1's sum over the three",
		Dropped: []string{"altitude", "attributes"},
	}
	if d.env != nil {
		cert.EnvelopeOverhead = d.env.Overhead
		for _, k := range d.env.Components {
			cert.NoiseKernel = append(cert.NoiseKernel, KernelTermOf(k))
		}
	}
	return d, cert, nil
}

// add appends a person's certificate and updates the headline.
func (c *Certificate) add(pc *PersonCertificate) {
	c.Persons = append(c.Persons, pc)
	c.SecretClasses.worse(pc.SecretClasses)
	c.EpsilonMax = math.Max(c.EpsilonMax, pc.EpsilonMax)
	c.GapMax = math.Max(c.GapMax, pc.GapMax)
}

// finish sets the epsilon's kind, the guarantee, the edge and the time
// taken.
func (c *Certificate) finish(start time.Time) error {
	c.EpsilonKind = EpsilonExact
	for _, p := range c.Persons {
		if p.EpsilonKind != EpsilonExact {
			c.EpsilonKind = EpsilonUpperBound
		}
	}
	c.Meaning = MeaningOf(c.EpsilonMax, c.Lambda, c.RadiusM)
	if c.SecretClasses.Max() == 0 && !c.SecretClasses.Points.Covered {
		// No class is covered: no number to translate.
		c.Meaning = Meaning{Text: "no guarantee: " + c.SecretClasses.Points.NotCovered}
	} else {
		c.Meaning.Text += "; against " + c.FamilyLine() + " (outside it: edge)"
	}
	c.Guarantee = guarantee(c)
	if err := c.edges(); err != nil {
		return err
	}
	c.LegendText = c.Legend()
	c.Seconds = time.Since(start).Seconds()
	return nil
}

// samplerText describes each path's sampler for the certificate.
var samplerText = map[Path]string{
	PathDense: "exact, dense: standard normals drawn exactly (Karney's algorithm), a Cholesky factor of the noise covariance (its rounding certified, " +
		"sampling_jitter added), and each coordinate of x + noise rounded to output_grid_m with certified error bounds (refined until decided), " +
		"so the output is the post-processing round(x + G) of the Gaussian mechanism and its support does not depend on the input's low-order bits",
	PathLinear: "exact, linear time: the noise kernel's state-space form sampled by a Kalman-type recursion with exact discretisation " +
		"between timestamps, from exact standard normals (Karney's algorithm) on AES-256-CTR streams keyed from the randomness source, " +
		"with certified error bounds (refined until decided) and each coordinate of x + noise rounded to output_grid_m; white noise of " +
		"variance sampling_jitter is added to cover the rounding of the recursion's coefficients, so the noise covariance dominates the certified one",
}

func uids(ps []*person) string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprintf("%q", p.uid))
	}
	if len(s) > 5 {
		s = append(s[:5], "...")
	}
	return strings.Join(s, ", ")
}

// KernelTermOf describes a kernel built by gp.NewKernel as a KernelTerm.
func KernelTermOf(k gp.Kernel) KernelTerm {
	t := KernelTerm{Kernel: gp.KernelName(k)}
	for _, p := range k.Params() {
		switch p.Name {
		case "variance":
			t.Weight = p.Value
		case "lengthscale":
			t.Lengthscale = p.Value
		case "period":
			t.Period = p.Value
		}
	}
	return t
}

// guarantee states the certificate in words. It claims nothing for a
// person whose data the prior was fitted on (PriorOverlapOverridden).
func guarantee(c *Certificate) string {
	kind := "at most"
	if c.EpsilonKind == EpsilonExact {
		kind = "exactly (the worst case is attained)"
	}
	var over []string
	for _, p := range c.Persons {
		if p.SecretClasses.Points.NotCovered == priorOverlapText {
			over = append(over, fmt.Sprintf("%q", p.UID))
		}
	}
	who := "For each person (uid) in the input"
	if len(over) > 0 {
		who = "For each other person (uid) in the input"
	}
	s := fmt.Sprintf("%s, and every secret of that person (by default every point, every place: any contiguous "+
		"window of their points moved rigidly, and the route: all of their points moved rigidly; see secret_classes for each class's adversaries), "+
		"an adversary whose prior on each Earth-centred (ECEF) coordinate of the locations is a Gaussian process with any mean and a member of prior_family (%v; "+
		"any variance of at least the stated one; the three coordinates correlated in any way), and who knows the mechanism and the released timestamps, changes its belief "+
		"about the secret locations by %s epsilon_max = %.4g in Rényi divergence of order %g, between any two hypotheses "+
		"within %g m of each other per location (Meehan and Chaudhuri's conditional inferential privacy). "+
		"Releasing the same person again composes: the epsilons add.",
		who, c.PriorFamily, kind, c.EpsilonMax, c.Lambda, c.RadiusM)
	if sm := c.SecretClasses.Places.ShorterMembers; sm != nil && c.SecretClasses.Places.Covered {
		s += fmt.Sprintf(" Except places against members shorter than the window: an adversary conditioning on a window (a stay) under a member of prior_family whose lengthscale is shorter "+
			"than the window's duration changes its belief by at most %.4g (secret_classes.places.shorter_members; not in epsilon_max).", sm.Epsilon)
	}
	if len(over) > 0 {
		lead := fmt.Sprintf("NOT COVERED: %s (person %s): no epsilon is certified for them. ", priorOverlapText, strings.Join(over, ", "))
		s = lead + s
		if len(over) == len(c.Persons) {
			s = lead
		}
	}
	if !c.Private {
		s = "NOT PRIVATE: the noise came from a seeded source (" + c.Randomness + "), which anyone with the seed can subtract. " + s
	}
	if c.PriorCoverage != PriorIndependent {
		s = strings.TrimSpace(s) + " Prior independence: " + c.PriorCoverage + "."
	}
	return s
}

// designer carries what every person's design shares.
type designer struct {
	opt    Options
	family prior.FamilySet
	kind   cip.Method
	linear bool // the linear path: no dense covariance
	env    *cip.Envelope
	envOpt cip.EnvelopeOptions // what env was designed with
	// ctx ends the release: checked between stages, before each Newton
	// step of the (E3) designer, between the coordinates the dense path
	// samples and before each chunk the linear path samples.
	ctx context.Context
	// overlap are the persons whose data the prior was fitted on
	// (released on request, not covered).
	overlap map[string]bool
}

// personDraw is one person's noise designed, certified and ready to
// draw: the certificate (with its sampling jitter), the timestamps in
// seconds and the sampler, which holds the person's stream of the source.
type personDraw struct {
	pc  *PersonCertificate
	ts  []float64
	mn  *noise.MultiNormal   // the dense path's certified factor
	mr  *noise.MarkovRelease // the linear path's recursion
	src noise.Source         // the dense path's stream
}

// plan designs, certifies and sets up the sampling of one person's noise
// from public data only (p's uid and timestamps, the traces' names and
// lengths): no coordinate is read.
func (d *designer) plan(p *person, traces []*trace.Trace, step func(string)) (*personDraw, error) {
	opt := d.opt
	n := len(p.pts)
	times := make([]time.Time, n)
	for i, q := range p.pts {
		times[i] = q.Time
	}
	secrets, err := resolveSecrets(p, opt.Secrets)
	if err != nil {
		return nil, err
	}
	var infos []TraceInfo
	for _, ti := range p.traces {
		t := traces[ti]
		infos = append(infos, TraceInfo{Index: ti, Name: baseName(t.Name), Points: t.Len(), Start: t.Points[0].Time, End: t.Points[t.Len()-1].Time})
	}
	pc, nd, ts, err := d.certify(p.uid, times, infos, secrets, step)
	if err != nil {
		return nil, err
	}
	if err := d.ctx.Err(); err != nil {
		return nil, err
	}
	step("sample")
	// A seeded run gives each person a stream of their own (crypto/rand is
	// used as it is), so seeded releases do not depend on how a corpus is
	// split into runs or on the order of its people.
	pd := &personDraw{pc: pc, ts: ts, src: noise.Derive(opt.Source, p.uid)}
	// The sampler's own diagonal (certified Cholesky jitter, or the linear
	// path's white noise) depends on the design and the timestamps only,
	// so it is in the certificate before the draw.
	if !d.linear {
		if pd.mn, err = noise.NewMultiNormalCholesky(withDiagonal(nd.SigmaG, nd.Jitter)); err != nil {
			return nil, fmt.Errorf("noise: %w", err)
		}
		pc.SamplingJitter = pd.mn.Jitter()
	} else {
		if pd.mr, err = d.markov(nd, ts, pd.src); err != nil {
			return nil, fmt.Errorf("noise: %w", err)
		}
		pc.SamplingJitter = pd.mr.Eta()
	}
	return pd, nil
}

// draw releases person p's points with pd's noise, writing them into outs:
// the only step that reads coordinates.
func (d *designer) draw(pd *personDraw, p *person, outs []*trace.Trace) error {
	opt := d.opt
	in := toECEF(len(p.pts), func(i int) geo.Point { return p.pts[i].Geo() })
	var xs [Dims][]float64
	for c := range xs {
		xs[c] = slices.Clone(in[c])
	}
	if err := d.sample(pd, xs[:]); err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	if f := opt.noiseFactor; f > 0 && f < 1 {
		// The weakened build of AuditNoise: the same draw, scaled.
		for c := range xs {
			for i := range xs[c] {
				xs[c][i] = in[c][i] + math.Round(f*(xs[c][i]-in[c][i])/OutputGrid)*OutputGrid
			}
		}
	}
	if ecefHook != nil {
		ecefHook(in, xs)
	}
	if opt.ecefTap != nil {
		opt.ecefTap(p.uid, pd.ts, in, xs)
	}
	for i, q := range p.pts {
		r, err := fromECEF(xs, i)
		if err != nil {
			return err
		}
		outs[p.owner[i]].Points[p.pos[i]] = trace.Point{Time: q.Time, Lat: r.Lat, Lon: r.Lon, Alt: math.NaN()}
	}
	return nil
}

// certify designs the noise of one person and certifies it, from public
// data only: the uid, the timestamps in time order, the traces they come
// from and the secrets. It returns the certificate, the design and the
// timestamps in seconds.
func (d *designer) certify(uid string, times []time.Time, infos []TraceInfo, secrets []cip.Secret, step func(string)) (*PersonCertificate, *PersonDesign, []float64, error) {
	opt := d.opt
	n := len(times)
	ts, err := gp.Seconds(times)
	if err != nil {
		return nil, nil, nil, err
	}
	step("design")
	nd, err := d.design(ts, secrets)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := d.ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	if sd := math.Sqrt(nd.MaxVariance); sd > MaxNoiseStd {
		return nil, nil, nil, &param.Error{Name: "epsilon", Value: opt.Epsilon, Why: fmt.Sprintf("with --radius %g the noise would have a standard deviation of %.0f km per coordinate, beyond the %.0f km a release projected to the surface represents: raise epsilon or lower the radius",
			opt.Radius, sd/1000, MaxNoiseStd/1000)}
	}
	step("certify")
	pc := &PersonCertificate{UID: uid, Points: n, NoiseScaleM2: nd.Alpha, NoiseBudgetM2: nd.Budget,
		LowerBoundM2: nd.LowerBound, Jitter: nd.Jitter, EpsilonKind: nd.Kind, Traces: infos}
	pc.RMSNoiseM = math.Sqrt(2 * pc.NoiseBudgetM2 / float64(n))
	// Per-secret epsilons; certificates of secrets are built for the
	// listed ones, the tightest ten, or every one on request (a million
	// of them would dominate the release's memory otherwise).
	eps, worst := cip.Epsilons(secrets, nd.LossFactors, opt.Lambda, opt.Radius)
	worstFactor := 0.0
	for i, e := range eps {
		if e == worst {
			worstFactor = nd.LossFactors[i]
		}
	}
	pc.SecretClasses = d.classes(nd, worstFactor, worst)
	if d.overlap[uid] {
		pc.SecretClasses.uncover()
	}
	pc.RouteNoiseM2 = nd.RouteVar
	pc.EpsilonMax = pc.SecretClasses.Max()
	pc.RMSOverSingle = pc.RMSNoiseM / (opt.Radius * math.Sqrt(opt.Lambda/opt.Epsilon))
	if pc.EpsilonMax > opt.Epsilon*(1+1e-9) {
		// The designers certify their own output; this is a last guard.
		return nil, nil, nil, fmt.Errorf("certified epsilon %v exceeds the target %v", pc.EpsilonMax, opt.Epsilon)
	}
	var err2 error
	secretCert := func(i int) SecretCertificate {
		gap, err := cip.PriorPosteriorGap(eps[i], opt.Lambda, opt.Delta)
		if err != nil && err2 == nil {
			err2 = fmt.Errorf("certificate: %w", err)
		}
		sc := SecretCertificate{Points: slices.Clone(secrets[i].Indices), LossFactor: nd.LossFactors[i], Epsilon: eps[i], Gap: gap}
		for _, j := range secrets[i].Indices {
			sc.Times = append(sc.Times, times[j])
		}
		return sc
	}
	pc.EpsilonSumDims = Dims * pc.EpsilonMax
	if pc.GapMax, err = cip.PriorPosteriorGap(pc.EpsilonMax, opt.Lambda, opt.Delta); err != nil {
		return nil, nil, nil, fmt.Errorf("certificate: %w", err)
	}
	pc.Secrets = summarise(eps, opt.Secrets == nil, secretCert)
	if opt.Secrets != nil || opt.ListSecrets {
		pc.SecretList = make([]SecretCertificate, len(secrets))
		for i := range secrets {
			pc.SecretList[i] = secretCert(i)
		}
	}
	if err2 != nil {
		return nil, nil, nil, err2
	}
	pc.Explanation = d.explain(nd, secrets, ts)
	if d.overlap[uid] {
		pc.Explanation = "NOT COVERED: " + priorOverlapText + "; the noise was designed as follows, but certifies nothing for this person. " + pc.Explanation
	}
	return pc, nd, ts, nil
}

// sample adds the person's noise to the Earth-centred x, y and z in
// place, exactly and on the output grid.
func (d *designer) sample(pd *personDraw, xs [][]float64) error {
	if pd.mn != nil {
		for _, x := range xs {
			if err := d.ctx.Err(); err != nil {
				return err
			}
			if _, err := pd.mn.AddOnGrid(x, x, OutputGrid, pd.src); err != nil {
				return err
			}
		}
		return nil
	}
	return pd.mr.Release(xs, xs, pd.ts)
}

// withDiagonal returns a + j I (a itself when j is 0).
func withDiagonal(a *mat.SymDense, j float64) *mat.SymDense {
	if j == 0 {
		return a
	}
	b := mat.NewSymDense(a.SymmetricDim(), nil)
	b.CopySym(a)
	for i := range a.SymmetricDim() {
		b.SetSym(i, i, b.At(i, i)+j)
	}
	return b
}

// summarise builds a SecretSummary from the per-secret epsilons, with the
// certificates of the tightest ten built by cert.
func summarise(eps []float64, all bool, cert func(i int) SecretCertificate) SecretSummary {
	s := SecretSummary{Spec: "listed", Count: len(eps)}
	if all {
		s.Spec = "all"
	}
	sorted := slices.Clone(eps)
	slices.Sort(sorted)
	for i, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		s.EpsilonQuantiles[i] = sorted[int(math.Round(q*float64(len(sorted)-1)))]
	}
	// The ten largest, earliest first among equals.
	top := make([]int, 0, 11)
	for i, e := range eps {
		k := len(top)
		for k > 0 && eps[top[k-1]] < e {
			k--
		}
		if k < 10 {
			top = slices.Insert(top, k, i)
			if len(top) > 10 {
				top = top[:10]
			}
		}
	}
	for _, i := range top {
		s.Tightest = append(s.Tightest, cert(i))
	}
	return s
}

// resolveSecrets maps secret timestamps (nil: every point a basic secret)
// to indices of the person's points.
func resolveSecrets(p *person, spec [][]time.Time) ([]cip.Secret, error) {
	if spec == nil {
		return cip.EveryPoint(len(p.pts)), nil
	}
	if len(spec) == 0 {
		return nil, &param.Error{Name: "secrets", Value: "", Why: "an empty list of secrets protects nothing"}
	}
	idx := make(map[int64]int, len(p.pts))
	for i, q := range p.pts {
		idx[q.Time.UnixNano()] = i
	}
	out := make([]cip.Secret, len(spec))
	for k, times := range spec {
		for _, tm := range times {
			i, ok := idx[tm.UnixNano()]
			if !ok {
				return nil, &param.Error{Name: "secrets", Value: tm.Format(time.RFC3339Nano), Why: fmt.Sprintf("secret %d: not the time of a point of the trace", k+1)}
			}
			if slices.Contains(out[k].Indices, i) {
				return nil, &param.Error{Name: "secrets", Value: tm.Format(time.RFC3339Nano), Why: fmt.Sprintf("secret %d: listed twice", k+1)}
			}
			out[k].Indices = append(out[k].Indices, i)
		}
		if len(out[k].Indices) == 0 {
			return nil, &param.Error{Name: "secrets", Value: "", Why: fmt.Sprintf("secret %d is empty", k+1)}
		}
	}
	return out, nil
}

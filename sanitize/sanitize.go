package sanitize

import (
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
	"github.com/tracepriv/tracepriv/trace"
)

// Designers, the values of Options.Design and Certificate.Design.
const (
	// DesignAuto picks DesignProportional for a single-lengthscale family
	// with every point a secret, DesignE3 for a single-lengthscale family
	// with listed secrets, and DesignEnvelope otherwise.
	DesignAuto = "auto"
	// DesignEnvelope: noise whose spectral density dominates every member
	// of the family (cip.Envelope); epsilon is a proven upper bound over
	// the family (exact only where the bound is attained).
	DesignEnvelope = "envelope"
	// DesignProportional: noise proportional to the single prior's Gram
	// matrix, the least noise when every point is a basic secret; exact.
	DesignProportional = "proportional"
	// DesignE3: the least-noise design (E3) of cip.OptimalTarget (or (E2)
	// for one basic secret) for a single-lengthscale family; exact (E1).
	DesignE3 = "e3"
)

// OutputGrid is the grid, in metres on the tangent plane, the released
// positions are rounded to: 2^-10 m, about a millimetre, far below GPS
// resolution and far above the error of the noise computation, so the
// exact sampler (noise.MultiNormal.AddOnGrid) rarely needs to refine.
const OutputGrid = 0x1p-10

// MaxNoiseStd is the largest noise standard deviation per coordinate, in
// metres, a release accepts: beyond it the tangent plane no longer
// represents the noise (and the release would be useless anyway).
const MaxNoiseStd = 100_000.0

// MaxOriginDistance is the largest distance, in metres, of an input point
// from the projection origin.
const MaxOriginDistance = 1_000_000.0

// planeHook, set only by tests, sees each release on the tangent plane
// before it is mapped back to WGS84.
var planeHook func(east, north []float64)

// DefaultMaxDensePoints is the largest number of points of one person the
// dense designs and sampler accept (memory grows as its square).
const DefaultMaxDensePoints = 12_000

// Options configures Release.
type Options struct {
	// Prior is the public prior family of each metric dimension.
	Prior *gp.Prior
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
	// prior-posterior gap of Theorem 3.1 (default 1e-5).
	Delta float64
	// Origin is the public origin of the tangent plane given by the user;
	// nil means the prior's (Prior.Origin). With neither, Release fails:
	// nothing is derived from the data.
	Origin *geo.Point
	// Design is one of the Design constants; "" means DesignAuto.
	Design string
	// ListSecrets lists every secret in the certificate even when every
	// point is a secret (listed secrets are always listed).
	ListSecrets bool
	// MaxDensePoints bounds the points of one person (default
	// DefaultMaxDensePoints).
	MaxDensePoints int
	// Source is the random source; nil means crypto/rand.
	Source noise.Source
	// Progress, if set, is told the stage being worked on.
	Progress func(stage string)
}

// ParamError reports an option that cannot give a valid release. Param is
// the option's name, which is also the command-line flag's.
type ParamError struct {
	Param string
	Value any
	Want  string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("sanitize: %s = %v: %s", e.Param, e.Value, e.Want)
}

func (o *Options) check() error {
	if o.Prior == nil {
		return &ParamError{"prior", nil, "a prior file is required (tracepriv fit writes one)"}
	}
	if err := o.Prior.Validate(); err != nil {
		return &ParamError{"prior", "", err.Error()}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(o.Epsilon > 0) || !finite(o.Epsilon):
		return &ParamError{"epsilon", o.Epsilon, "must be positive and finite"}
	case !(o.Lambda > 1) || !finite(o.Lambda):
		return &ParamError{"lambda", o.Lambda, "the Rényi order must be finite and > 1"}
	case !(o.Radius > 0) || !finite(o.Radius):
		return &ParamError{"radius", o.Radius, "must be positive and finite (metres)"}
	}
	if o.Delta == 0 {
		o.Delta = 1e-5
	}
	if !(o.Delta > 0 && o.Delta < 1) {
		return &ParamError{"delta", o.Delta, "must be in (0, 1)"}
	}
	switch o.Design {
	case "":
		o.Design = DesignAuto
	case DesignAuto, DesignEnvelope, DesignProportional, DesignE3:
	default:
		return &ParamError{"design", o.Design, "one of auto, envelope, proportional, e3"}
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
func (o *Options) design(f gp.Family) (string, error) {
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
		return "", &ParamError{"design", m, fmt.Sprintf("needs a single-lengthscale prior; the prior is the family %v (use envelope)", f)}
	}
	if m == DesignProportional && o.Secrets != nil {
		return "", &ParamError{"design", m, "protects every point; listed secrets need e3 or envelope"}
	}
	return m, nil
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
			return nil, fmt.Errorf("sanitize: trace %d (%s) is empty", i+1, t.Name)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("sanitize: trace %d (%s): %w", i+1, t.Name, err)
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
				return nil, fmt.Errorf("sanitize: person %q: traces %d and %d both have a point at %s; a person is at one place at a time (merge the traces or drop one point)",
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
	start := time.Now()
	if err := opt.check(); err != nil {
		return nil, nil, err
	}
	if len(traces) == 0 {
		return nil, nil, errors.New("sanitize: no trace")
	}
	step := func(s string) {
		if opt.Progress != nil {
			opt.Progress(s)
		}
	}
	var pubOrigin *geo.Point
	note := ""
	if o := opt.Prior.Origin; o != nil {
		pubOrigin, note = &geo.Point{Lat: o.Lat, Lon: o.Lon}, o.Note
	}
	origin, err := geo.PublicOrigin(opt.Origin, pubOrigin, note)
	if err != nil {
		if errors.Is(err, geo.ErrNoOrigin) {
			return nil, nil, &ParamError{"origin", "", "no public origin: give one (LAT,LON, e.g. a city centre) or use a prior file that records one (tracepriv fit writes its corpus's centre); nothing is derived from the trace"}
		}
		return nil, nil, &ParamError{"origin", opt.Origin, err.Error()}
	}
	persons, err := group(traces)
	if err != nil {
		return nil, nil, err
	}
	if opt.Secrets != nil && len(persons) > 1 {
		return nil, nil, &ParamError{"secrets", len(opt.Secrets), fmt.Sprintf("listed secrets need an input with one person; it has %d (uids %s)", len(persons), uids(persons))}
	}
	fam := opt.Prior.Family()
	design, err := opt.design(fam)
	if err != nil {
		return nil, nil, err
	}
	d := &designer{opt: opt, family: fam, kind: design}
	if design == DesignEnvelope || design == DesignProportional {
		step("envelope")
		if d.env, err = cip.NewEnvelope(fam, nil); err != nil {
			return nil, nil, fmt.Errorf("sanitize: %w", err)
		}
	}
	cert := &Certificate{
		Version: CertificateVersion, PrivacyUnit: "person",
		EpsilonTarget: opt.Epsilon, Lambda: opt.Lambda, RadiusM: opt.Radius, Delta: opt.Delta,
		PriorFamily: fam, Prior: opt.Prior, Origin: origin, Design: design,
		OutputGridM: OutputGrid, Randomness: noise.Describe(opt.Source),
		Sampler: "exact: standard normals drawn exactly (Karney's algorithm), a Cholesky factor of the noise covariance, " +
			"and each coordinate of x + noise rounded to output_grid_m with certified error bounds (refined until decided), " +
			"so the output is the post-processing round(x + G) of the Gaussian mechanism and its support does not depend on the input's low-order bits",
		Timestamps: "public: released as they are; the noise depends on them",
		Dimensions: "east and north (metres on the tangent plane at origin) are independent under the prior and get independent noise of the same covariance; " +
			"epsilon is for displacements within radius_m in the plane (the larger per-dimension loss); the plane projection is 1-Lipschitz, " +
			"so this covers displacements of radius_m on the ground; epsilon_sum_of_dimensions is Corollary 7.2.1's sum",
		Dropped: []string{"altitude", "attributes"},
	}
	if d.env != nil {
		cert.EnvelopeOverhead = d.env.Overhead
		for _, k := range d.env.Components {
			cert.NoiseKernel = append(cert.NoiseKernel, KernelTermOf(k))
		}
	}
	enu := geo.NewENU(origin.Point())
	outs := make([]*trace.Trace, len(traces))
	for i, t := range traces {
		outs[i] = &trace.Trace{UID: t.UID, Name: t.Name, Points: make([]trace.Point, t.Len())}
	}
	exact := true
	for _, p := range persons {
		pc, err := d.person(p, traces, enu, outs, step)
		if err != nil {
			if len(persons) > 1 || p.uid != "" {
				return nil, nil, fmt.Errorf("sanitize: person %q: %w", p.uid, err)
			}
			return nil, nil, err
		}
		cert.Persons = append(cert.Persons, pc)
		cert.EpsilonMax = math.Max(cert.EpsilonMax, pc.EpsilonMax)
		cert.GapMax = math.Max(cert.GapMax, pc.GapMax)
		exact = exact && pc.EpsilonKind == EpsilonExact
	}
	cert.EpsilonKind = EpsilonUpperBound
	if exact {
		cert.EpsilonKind = EpsilonExact
	}
	cert.Guarantee = guarantee(cert)
	cert.Seconds = time.Since(start).Seconds()
	return outs, cert, nil
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

// guarantee states the certificate in words.
func guarantee(c *Certificate) string {
	kind := "at most"
	if c.EpsilonKind == EpsilonExact {
		kind = "exactly (the worst case is attained)"
	}
	return fmt.Sprintf("For each person (uid) in the input, and every secret of that person, an adversary whose prior on each "+
		"plane coordinate is a Gaussian process with any mean, the kernel %s and any variance of at least %.4g m^2 "+
		"(the family stated in prior_family), and who knows the mechanism and the released timestamps, changes its belief "+
		"about the secret locations by %s epsilon_max = %.4g in Rényi divergence of order %g, between any two hypotheses "+
		"within %g m of each other per location (Meehan and Chaudhuri's conditional inferential privacy). "+
		"Releasing the same person again composes: the epsilons add.",
		c.PriorFamily, c.PriorFamily.Variance, kind, c.EpsilonMax, c.Lambda, c.RadiusM)
}

// designer carries what every person's design shares.
type designer struct {
	opt    Options
	family gp.Family
	kind   string
	env    *cip.Envelope
}

// person designs, certifies and samples the noise of one person, writing
// the released points into outs.
func (d *designer) person(p *person, traces []*trace.Trace, enu *geo.ENU, outs []*trace.Trace, step func(string)) (*PersonCertificate, error) {
	opt := d.opt
	n := len(p.pts)
	if n > opt.MaxDensePoints {
		return nil, &ParamError{"max-dense-points", opt.MaxDensePoints, fmt.Sprintf("the person has %d points; the dense design needs memory growing as their square", n)}
	}
	origin := enu.Origin()
	for i, q := range p.pts {
		if dist := geo.Haversine(origin, q.Geo()); dist > MaxOriginDistance {
			return nil, &ParamError{"origin", origin, fmt.Sprintf("point %d of trace %d is %.0f km from it; the tangent plane is accurate within %.0f km: use an origin in the region of the data",
				p.pos[i]+1, p.owner[i]+1, dist/1000, MaxOriginDistance/1000)}
		}
	}
	times := make([]time.Time, n)
	for i, q := range p.pts {
		times[i] = q.Time
	}
	ts, err := gp.Seconds(times)
	if err != nil {
		return nil, err
	}
	secrets, err := resolveSecrets(p, opt.Secrets)
	if err != nil {
		return nil, err
	}
	step("design")
	nd, err := d.design(ts, secrets)
	if err != nil {
		return nil, err
	}
	if sd := math.Sqrt(maxDiag(nd.SigmaG)); sd > MaxNoiseStd {
		return nil, &ParamError{"epsilon", opt.Epsilon, fmt.Sprintf("with --radius %g the noise would have a standard deviation of %.0f km per coordinate, beyond the %.0f km a tangent-plane release represents: raise epsilon or lower the radius",
			opt.Radius, sd/1000, MaxNoiseStd/1000)}
	}
	step("certify")
	pc := &PersonCertificate{UID: p.uid, Points: n, NoiseScaleM2: nd.Alpha, NoiseBudgetM2: mat.Trace(nd.SigmaG),
		LowerBoundM2: nd.LowerBound, Jitter: nd.Jitter, EpsilonKind: nd.Kind}
	pc.RMSNoiseM = math.Sqrt(2 * pc.NoiseBudgetM2 / float64(n))
	for _, ti := range p.traces {
		t := traces[ti]
		pc.Traces = append(pc.Traces, TraceInfo{Index: ti, Name: t.Name, Points: t.Len(), Start: t.Points[0].Time, End: t.Points[t.Len()-1].Time})
	}
	list := make([]SecretCertificate, len(secrets))
	for i, s := range secrets {
		eps := cip.Epsilon(nd.LossFactors[i], opt.Lambda, opt.Radius, s.Locations())
		gap, err := cip.PriorPosteriorGap(eps, opt.Lambda, opt.Delta)
		if err != nil {
			return nil, fmt.Errorf("certificate: %w", err)
		}
		sc := SecretCertificate{Points: slices.Clone(s.Indices), LossFactor: nd.LossFactors[i], Epsilon: eps, Gap: gap}
		for _, j := range s.Indices {
			sc.Times = append(sc.Times, p.pts[j].Time)
		}
		list[i] = sc
		pc.EpsilonMax = math.Max(pc.EpsilonMax, eps)
		pc.EpsilonSumDims = math.Max(pc.EpsilonSumDims, 2*eps)
		pc.GapMax = math.Max(pc.GapMax, gap)
	}
	if pc.EpsilonMax > opt.Epsilon*(1+1e-9) {
		// The designers certify their own output; this is a last guard.
		return nil, fmt.Errorf("certified epsilon %v exceeds the target %v", pc.EpsilonMax, opt.Epsilon)
	}
	pc.Secrets = summarise(list, opt.Secrets == nil)
	if opt.Secrets != nil || opt.ListSecrets {
		pc.SecretList = list
	}
	pc.Explanation = d.explain(nd, secrets, list, ts)

	// Release: the only step that reads coordinates.
	step("sample")
	mn, err := noise.NewMultiNormalCholesky(withDiagonal(nd.SigmaG, nd.Jitter))
	if err != nil {
		return nil, fmt.Errorf("noise: %w", err)
	}
	pc.SamplingJitter = mn.Jitter()
	east, north := make([]float64, n), make([]float64, n)
	for i, q := range p.pts {
		east[i], north[i] = enu.Forward(q.Geo())
	}
	if east, err = mn.AddOnGrid(nil, east, OutputGrid, opt.Source); err != nil {
		return nil, fmt.Errorf("noise: %w", err)
	}
	if north, err = mn.AddOnGrid(nil, north, OutputGrid, opt.Source); err != nil {
		return nil, fmt.Errorf("noise: %w", err)
	}
	if planeHook != nil {
		planeHook(east, north)
	}
	for i, q := range p.pts {
		r := enu.InverseClamped(east[i], north[i])
		if math.IsNaN(r.Lat) || math.IsNaN(r.Lon) || math.IsInf(r.Lat, 0) || math.IsInf(r.Lon, 0) {
			return nil, fmt.Errorf("point %d: the release is not finite (%v, %v)", i, r.Lat, r.Lon)
		}
		outs[p.owner[i]].Points[p.pos[i]] = trace.Point{Time: q.Time, Lat: r.Lat, Lon: r.Lon, Alt: math.NaN()}
	}
	return pc, nil
}

func maxDiag(a mat.Symmetric) float64 {
	m := 0.0
	for i := range a.SymmetricDim() {
		m = math.Max(m, a.At(i, i))
	}
	return m
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

// summarise builds a SecretSummary.
func summarise(list []SecretCertificate, all bool) SecretSummary {
	s := SecretSummary{Spec: "listed", Count: len(list)}
	if all {
		s.Spec = "all"
	}
	eps := make([]float64, len(list))
	for i, c := range list {
		eps[i] = c.Epsilon
	}
	sorted := slices.Clone(eps)
	slices.Sort(sorted)
	for i, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		s.EpsilonQuantiles[i] = sorted[int(math.Round(q*float64(len(sorted)-1)))]
	}
	ord := make([]int, len(list))
	for i := range ord {
		ord[i] = i
	}
	sort.SliceStable(ord, func(a, b int) bool { return eps[ord[a]] > eps[ord[b]] })
	for _, i := range ord[:min(10, len(ord))] {
		s.Tightest = append(s.Tightest, list[i])
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
		return nil, &ParamError{"secrets", "", "an empty list of secrets protects nothing"}
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
				return nil, &ParamError{"secrets", tm.Format(time.RFC3339Nano), fmt.Sprintf("secret %d: not the time of a point of the trace", k+1)}
			}
			if slices.Contains(out[k].Indices, i) {
				return nil, &ParamError{"secrets", tm.Format(time.RFC3339Nano), fmt.Sprintf("secret %d: listed twice", k+1)}
			}
			out[k].Indices = append(out[k].Indices, i)
		}
		if len(out[k].Indices) == 0 {
			return nil, &ParamError{"secrets", "", fmt.Sprintf("secret %d is empty", k+1)}
		}
	}
	return out, nil
}

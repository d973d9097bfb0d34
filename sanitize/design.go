package sanitize

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/trace"
)

// PersonDesign is the noise of one dimension of one person's points and its
// certificate: cip.DesignNoise's NoiseDesign (the noise for the listed
// secrets), completed with the route's noise and the certified losses of
// the secret classes (places, the route) that a release states.
type PersonDesign struct {
	// Design is the designer that ran (DesignE3, DesignEnvelope or
	// DesignProportional, as Certificate.Design).
	Design cip.Method
	// SigmaG is the noise covariance in square metres at the person's
	// timestamps; nil on the linear path, which never forms it.
	SigmaG *mat.SymDense
	// Budget is tr(SigmaG) and MaxVariance its largest diagonal entry.
	Budget, MaxVariance float64
	// Alpha scales the envelope kernel (envelope and proportional
	// designs): SigmaG = Alpha Gram(k_D).
	Alpha float64
	// LossFactors are the certified loss factors of the secrets, exact or
	// upper bounds as Kind says.
	LossFactors []float64
	Kind        string
	// LowerBound is the (E3) designer's lower bound on the least budget
	// (0 if none); Jitter the certifying factorisation's diagonal jitter.
	LowerBound, Jitter float64
	// RouteVar is the variance (m^2) of the route component beta
	// k_route (cip.RouteKernel), included in SigmaG, Budget and
	// MaxVariance. RouteLossFactor and PlaceLossFactor are the certified
	// loss factors of the route and of places (see SecretClasses);
	// PlacesCovered is false when no kernel of the family has a place
	// bound, PlacesUncovered says what places leave out.
	RouteVar, RouteLossFactor, PlaceLossFactor float64
	PlacesCovered                              bool
	PlacesUncovered                            []string
	// PlacesEveryLength is true when places are certified against the
	// conditioning members of every lengthscale, not only those at least
	// as long as the window (cip.PlaceConditionalBound).
	PlacesEveryLength bool
	// PlacesEveryScale is the factor by which PlacesEveryLength scaled the
	// noise (1 when the bound already met the target).
	PlacesEveryScale float64
	// ShorterPlaceLossFactor is, when places are certified only against
	// members at least as long as the window, the bound of
	// cip.PlaceConditionalBound on every window against the Matérn members
	// of every lengthscale under this noise (0 when none applies).
	ShorterPlaceLossFactor float64

	targets, minEigen []float64
}

// Design returns the noise that Release adds to each dimension of a person
// with timestamps ts (seconds) and the given secrets, with its
// certificate. It reads only public inputs (opt's prior, design and
// target), so an auditor or an adversary can recompute it from a
// certificate (see Certificate.NoiseCovariance).
func Design(ts []float64, secrets []cip.Secret, opt Options) (*PersonDesign, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	fam := opt.Prior.Families()
	design, err := opt.design(fam)
	if err != nil {
		return nil, err
	}
	path, design, err := opt.path(fam, design, len(ts))
	if err != nil {
		return nil, err
	}
	d := &designer{opt: opt, family: fam, kind: design, ctx: context.Background()}
	if design != DesignE3 {
		if d.env, err = cip.NewEnvelope(fam, &cip.EnvelopeOptions{StateSpace: path == PathLinear, PlaceScaled: opt.placeScaled(design)}); err != nil {
			return nil, err
		}
	}
	return d.design(ts, secrets)
}

// design runs the designer's method through cip.DesignNoise, in target
// mode at the options' epsilon: the e3 design on the Gram matrix of the
// family's single member at ts, the kernel designs (envelope,
// proportional) on the family's envelope.
func (d *designer) design(ts []float64, secrets []cip.Secret) (*PersonDesign, error) {
	opt := d.opt
	for _, s := range secrets {
		if err := s.Validate(len(ts)); err != nil {
			return nil, err
		}
	}
	targets, err := cip.TargetLossFactors(secrets, opt.Epsilon, opt.Lambda, opt.Radius)
	if err != nil {
		return nil, err
	}
	req := cip.DesignRequest{Method: d.kind, Secrets: secrets, Targets: targets, Context: d.ctx}
	if d.kind == DesignE3 {
		f := d.family.Kernels[0]
		k, err := f.Member(opt.Prior.Variance, f.LengthscaleMin)
		if err != nil {
			return nil, err
		}
		req.Sigma = gp.Gram(k, ts)
	} else {
		req.Envelope, req.Times, req.KernelOnly = d.env, ts, d.linear
	}
	cd, err := cip.DesignNoise(req)
	if err != nil {
		return nil, err
	}
	nd := &PersonDesign{Design: d.kind, SigmaG: cd.SigmaG, LossFactors: cd.LossFactors, LowerBound: cd.LowerBound, Jitter: cd.Jitter, targets: targets}
	nd.Kind = EpsilonUpperBound
	if cd.Exact {
		nd.Kind = EpsilonExact
	}
	if fd := cd.Family; fd != nil {
		nd.Alpha, nd.minEigen = fd.Alpha, fd.MinEigen
		// The noise is stationary: every point has variance alpha k_D(0),
		// alpha times the envelope's overhead.
		nd.MaxVariance = fd.Alpha * d.env.Overhead
		nd.Budget = cd.Budget
	} else {
		nd.setBudget()
	}
	// Places and the route, at the target of a displacement of radius r.
	d.classDesign(nd, ts, 2*opt.Epsilon/(opt.Lambda*opt.Radius*opt.Radius))
	if d.kind == DesignE3 && !opt.PointsOnly {
		// The route's noise lowers the listed secrets' losses: recompute
		// them exactly (E1) for the noise released.
		lf, err := cip.LossFactors(req.Sigma, withDiagonal(nd.SigmaG, nd.Jitter), secrets)
		if err != nil {
			return nil, err
		}
		nd.LossFactors = lf
	}
	return nd, nil
}

// setBudget reads Budget and MaxVariance off a dense SigmaG.
func (nd *PersonDesign) setBudget() {
	nd.Budget = mat.Trace(nd.SigmaG)
	for i := range nd.SigmaG.SymmetricDim() {
		nd.MaxVariance = math.Max(nd.MaxVariance, nd.SigmaG.At(i, i))
	}
}

// explain says which secrets set the noise level and why.
func (d *designer) explain(nd *PersonDesign, secrets []cip.Secret, ts []float64) string {
	opt := d.opt
	basicVar := opt.Lambda * opt.Radius * opt.Radius / (2 * opt.Epsilon)
	var b strings.Builder
	fmt.Fprintf(&b, "A basic secret must hide a displacement of up to %g m at epsilon %g (Rényi order %g): that takes noise of variance lambda r^2/(2 epsilon) = %.4g m^2 per coordinate (standard deviation %.3g m), correlated like the prior. ",
		opt.Radius, opt.Epsilon, opt.Lambda, basicVar, math.Sqrt(basicVar))
	switch d.kind {
	case DesignE3:
		fmt.Fprintf(&b, "The (E3) design spends the least total noise (%.4g m^2 per coordinate over %d points; lower bound %.4g) that meets the target for the %d listed secrets under the single prior %v.",
			nd.Budget, len(ts), nd.LowerBound, len(secrets), d.family)
		return b.String()
	case DesignEnvelope:
		lo, hi := d.family.LengthscaleRange()
		fmt.Fprintf(&b, "To hold for every member of the family (%v; lengthscales %.4g to %.4g s) the noise follows a spectral envelope of it, %.3gx the variance one lengthscale alone would need. ",
			d.family, lo, hi, d.env.Overhead)
	}
	if nd.PlacesCovered && !d.env.Proportional {
		// The envelope dominates each Matérn kernel's members scaled by its
		// place norm (cip.EnvelopeOptions.PlaceScaled), so the factor left
		// for the scale is the envelope's own, usually 1.
		raw, _ := cip.PlaceFactor(d.family)
		p, _ := d.env.PlaceFactor()
		fmt.Fprintf(&b, "Places: a window of the trace moved rigidly must stay hidden from an adversary who conditions on it under a member at least as long as the window; "+
			"that needs up to %.4gx a basic secret's noise (cip.PlaceFactor), which the envelope's shape includes (a factor of %.4g remains for its scale). ", raw, p)
	}
	switch {
	case nd.PlacesEveryLength && nd.PlacesEveryScale > 1:
		fmt.Fprintf(&b, "Places against members shorter than the window too (PlacesEveryLength): the bound on every window of up to the person's span against every Matérn member of the family "+
			"(cip.PlaceConditionalBound) needed the whole noise's variance scaled by %.4g. ", nd.PlacesEveryScale)
	case nd.PlacesEveryLength:
		b.WriteString("Places against members shorter than the window too: the bound on every window of up to the person's span against every Matérn member of the family " +
			"(cip.PlaceConditionalBound) is within the target without more noise. ")
	case nd.ShorterPlaceLossFactor > 0:
		fmt.Fprintf(&b, "Places against members shorter than the window are not within the target: under this noise the bound on every window of up to the person's span against every Matérn member "+
			"(cip.PlaceConditionalBound) is epsilon %.4g (secret_classes.places.shorter_members); PlacesEveryLength (--places-every-length) would scale the noise's variance by %.4g (its RMS by %.3g) to bring it within the target. ",
			opt.Lambda/2*opt.Radius*opt.Radius*nd.ShorterPlaceLossFactor, opt.Lambda/2*opt.Radius*opt.Radius*nd.ShorterPlaceLossFactor/opt.Epsilon,
			math.Sqrt(opt.Lambda/2*opt.Radius*opt.Radius*nd.ShorterPlaceLossFactor/opt.Epsilon))
	}
	switch {
	case opt.PointsOnly:
		b.WriteString("Places and the route are not protected (points only): no noise is added for them. ")
	case nd.RouteVar > 0:
		fmt.Fprintf(&b, "Route: a common offset of variance %.4g m^2 per coordinate (standard deviation %.3g m) hides the whole record moved rigidly, against any prior, "+
			"and a place against an adversary who believes the person stood still there. ", nd.RouteVar, math.Sqrt(nd.RouteVar))
	default:
		// No common offset: saying one of variance 0 hides anything would
		// be false; the envelope's slowest components do the work.
		fmt.Fprintf(&b, "Route: the envelope's own low frequencies already bound the whole record moved rigidly, against any prior, "+
			"and a place against an adversary who believes the person stood still there (epsilon %.4g, within the target), so no common offset is added. ",
			opt.Lambda/2*opt.Radius*opt.Radius*nd.RouteLossFactor)
	}
	// The secret with the largest 1/(t_S mu_S) sets alpha.
	drv, worst := 0, 0.0
	for i := range secrets {
		if v := 1 / (nd.targets[i] * nd.minEigen[i]); v > worst {
			drv, worst = i, v
		}
	}
	s := secrets[drv]
	if len(s.Indices) == 1 {
		if opt.Secrets == nil {
			b.WriteString("Every point is a basic secret, and every one gets this protection.")
		} else {
			b.WriteString("The listed basic secrets set the noise; a proven bound over a family covers the whole trace at once, so a subset of points costs as much noise as every point.")
		}
		return b.String()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, i := range s.Indices {
		lo, hi = math.Min(lo, ts[i]), math.Max(hi, ts[i])
	}
	span := hi - lo
	fmt.Fprintf(&b, "Compound secret %d (%d points within %.3g s) sets the noise at %.3gx that of a basic secret: the prior makes its points strongly correlated "+
		"(the smallest eigenvalue of their correlation is %.3g), so moving each of them by up to %g m independently is a displacement the prior finds implausible, "+
		"and hiding it needs that much more noise.",
		drv+1, len(s.Indices), span, worst/basicVar, nd.minEigen[drv], opt.Radius)
	return b.String()
}

// NoiseKernels returns the stationary kernels, in square metres, whose sum
// is the per-dimension noise of the person's release under a kernel design
// (envelope or proportional): the envelope's components scaled by the
// person's NoiseScaleM2, then the route's common offset if any. The
// reported jitters are not included. For the e3 design, which is not
// stationary, it is an error (use NoiseCovariance).
func (c *Certificate) NoiseKernels(p *PersonCertificate) ([]gp.Kernel, error) {
	if c.Design != DesignEnvelope && c.Design != DesignProportional {
		return nil, fmt.Errorf("the %s design's noise is not a sum of kernels", c.Design)
	}
	var out []gp.Kernel
	for _, t := range c.NoiseKernel {
		k, err := gp.NewKernel(t.Kernel, t.Weight*p.NoiseScaleM2, t.Lengthscale, t.Period)
		if err != nil {
			return nil, fmt.Errorf("certificate noise kernel: %w", err)
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("certificate has no noise kernel")
	}
	if p.RouteNoiseM2 > 0 {
		rk, err := gp.NewKernel(c.RouteKernel.Kernel, c.RouteKernel.Weight*p.RouteNoiseM2, c.RouteKernel.Lengthscale, c.RouteKernel.Period)
		if err != nil {
			return nil, fmt.Errorf("certificate route noise kernel: %w", err)
		}
		out = append(out, rk)
	}
	return out, nil
}

// NoiseCovariance recomputes from the certificate the per-dimension noise
// covariance the person's release was drawn from: SigmaG plus the reported
// jitters (the matrix the sampler factorised; see
// PersonCertificate.SamplingJitter). For the kernel designs (envelope,
// proportional) the noise is stationary and ts may be any of the person's
// timestamps (a window, shifted to start at 0); for e3 they must be all of
// them. ts are the person's timestamps in seconds from their first.
func (c *Certificate) NoiseCovariance(p *PersonCertificate, ts []float64) (*mat.SymDense, error) {
	var g *mat.SymDense
	switch c.Design {
	case DesignEnvelope, DesignProportional:
		terms, err := c.NoiseKernels(p)
		if err != nil {
			return nil, err
		}
		k := terms[0]
		for _, t := range terms[1:] {
			k = gp.Sum{K1: k, K2: t}
		}
		g = gp.Gram(k, ts)
	case DesignE3:
		if len(ts) != p.Points {
			return nil, fmt.Errorf("%d timestamps for a person with %d points", len(ts), p.Points)
		}
		secrets := make([]cip.Secret, len(p.SecretList))
		for i, s := range p.SecretList {
			secrets[i] = cip.Secret{Indices: s.Points}
		}
		nd, err := Design(ts, secrets, Options{Prior: c.Prior, Epsilon: c.EpsilonTarget, Lambda: c.Lambda, Radius: c.RadiusM, Design: DesignE3, Delta: c.Delta, PointsOnly: c.PointsOnly})
		if err != nil {
			return nil, err
		}
		g = nd.SigmaG
	default:
		return nil, fmt.Errorf("certificate design %q is unknown", c.Design)
	}
	return withDiagonal(g, p.Jitter+p.SamplingJitter), nil
}

// InputNoiseCovariance returns the per-dimension noise covariance of the
// certificate's only person over the points of traces in input order
// (trace by trace, point by point) rather than time order: the covariance
// NoiseCovariance recomputes, with rows and columns permuted to the input.
// traces are the traces the release was made from (or the released ones:
// their timestamps are the same). The result is a view of the time-ordered
// matrix; it holds no copy.
func (c *Certificate) InputNoiseCovariance(traces []*trace.Trace) (mat.Symmetric, error) {
	if len(c.Persons) != 1 {
		return nil, fmt.Errorf("the input has %d people; the noise covariance is per person (split the input)", len(c.Persons))
	}
	p := c.Persons[0]
	type at struct {
		t     time.Time
		input int
	}
	var pts []at
	for _, t := range traces {
		for _, q := range t.Points {
			pts = append(pts, at{q.Time, len(pts)})
		}
	}
	if len(pts) != p.Points {
		return nil, fmt.Errorf("the traces have %d points, the certificate's person %d", len(pts), p.Points)
	}
	// Time order, as the designer saw the points (ties keep input order).
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].t.Before(pts[j].t) })
	times := make([]time.Time, len(pts))
	for i, q := range pts {
		times[i] = q.t
	}
	ts, err := gp.Seconds(times)
	if err != nil {
		return nil, err
	}
	g, err := c.NoiseCovariance(p, ts)
	if err != nil {
		return nil, err
	}
	// pos[k] is the time-order index of input point k.
	pos := make([]int, len(pts))
	for i, q := range pts {
		pos[q.input] = i
	}
	return permutedSym{g, pos}, nil
}

// permutedSym is the symmetric matrix a[pos[i], pos[j]].
type permutedSym struct {
	a   mat.Symmetric
	pos []int
}

func (p permutedSym) Dims() (int, int)         { return len(p.pos), len(p.pos) }
func (p permutedSym) At(i, j int) float64      { return p.a.At(p.pos[i], p.pos[j]) }
func (p permutedSym) T() mat.Matrix            { return p }
func (p permutedSym) SymmetricDim() int        { return len(p.pos) }
func (p permutedSym) Symmetric() mat.Symmetric { return p }

// Secrets given as times (Options.Secrets) in text: the syntax of
// "tracepriv sanitize --secrets" and of its secrets files.

// ParseSecretTimes reads a list of secrets: items separated by commas,
// each one time (a basic secret) or several joined by ";" (a compound
// secret; ";" because RFC 3339 offsets contain "+"), each time in RFC 3339
// or as Unix seconds.
func ParseSecretTimes(list string) ([][]time.Time, error) {
	var out [][]time.Time
	for _, item := range strings.Split(list, ",") {
		sec, err := parseSecretItem(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		out = append(out, sec)
	}
	return out, nil
}

// ReadSecretTimes reads a file of secrets: one secret per line in the
// syntax of an item of ParseSecretTimes, blank lines and lines starting
// with # skipped. Errors name the file (name) and line.
func ReadSecretTimes(r io.Reader, name string) ([][]time.Time, error) {
	var out [][]time.Time
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		sec, err := parseSecretItem(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, sec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no secrets", name)
	}
	return out, nil
}

// parseSecretItem reads "T" or "T1;T2;...".
func parseSecretItem(s string) ([]time.Time, error) {
	var out []time.Time
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if t, err := time.Parse(time.RFC3339Nano, part); err == nil {
			out = append(out, t)
			continue
		}
		if u, err := strconv.ParseFloat(part, 64); err == nil {
			sec := int64(u)
			out = append(out, time.Unix(sec, int64((u-float64(sec))*1e9)).UTC())
			continue
		}
		return nil, fmt.Errorf("%q is neither an RFC 3339 time nor Unix seconds", part)
	}
	if len(out) == 0 {
		return nil, errors.New("empty secret")
	}
	return out, nil
}

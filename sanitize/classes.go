package sanitize

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// Secret classes a release certifies (Certificate.SecretClasses): the
// points of the trace (basic secrets, or the listed ones), its places (any
// contiguous window moved rigidly: a stay, a trip) and its route (the whole
// record moved rigidly: the parallel street). See cip's documentation of
// places and routes for the bounds and their proofs.

// SecretClasses is the certificate of each class of secrets of a person
// (and, on the Certificate, the worst over the persons).
type SecretClasses struct {
	Points ClassCertificate `json:"points"`
	Places ClassCertificate `json:"places"`
	Route  ClassCertificate `json:"route"`
}

// ClassCertificate is the guarantee for one class of secrets.
type ClassCertificate struct {
	// Covered is false when the class is not certified (the reason in
	// NotCovered); Epsilon is then 0 and does not enter epsilon_max.
	Covered bool `json:"covered"`
	// Epsilon is the certified Rényi loss at the certificate's lambda for
	// a displacement of up to radius_m; LossFactor the per-dimension
	// factor it comes from (eps = lambda/2 r^2 LossFactor).
	Epsilon    float64 `json:"epsilon"`
	LossFactor float64 `json:"loss_factor"`
	// Kind is "exact" or "upper_bound".
	Kind string `json:"kind"`
	// Covers states the secrets and adversaries of the class.
	Covers string `json:"covers"`
	// NotCovered states what the class leaves out, if anything.
	NotCovered string `json:"not_covered,omitempty"`
	// ShorterMembers, on a places class certified only against members at
	// least as long as the window (the default), states the epsilon of
	// every window against the members shorter than it: what NotCovered
	// leaves out, as a number beside the headline (not in epsilon_max).
	ShorterMembers *ShorterMembers `json:"shorter_members,omitempty"`
	// Meaning says what Epsilon means to a person.
	Meaning Meaning `json:"meaning"`
}

// ShorterMembers is the loss of any contiguous window moved rigidly by up
// to radius_m against the Matérn members of the family of every lengthscale
// up to the person's span, conditioning on the window, under the noise
// released (cip.PlaceConditionalBound): a proven upper bound for Matérn
// 1/2 and 3/2 members (the 3/2 slope bound proved in interval arithmetic),
// resting for Matérn 5/2 members on slope bounds that were measured, not
// proven (cip.PlaceSlopeBounds).
type ShorterMembers struct {
	Epsilon    float64 `json:"epsilon"`
	LossFactor float64 `json:"loss_factor"`
	// Kind is "upper_bound".
	Kind    string  `json:"kind"`
	Covers  string  `json:"covers"`
	Meaning Meaning `json:"meaning"`
}

// Meaning translates an epsilon into a person's terms. A secret moved by
// at most radius_m under Gaussian noise is a Gaussian shift, and for a
// Gaussian shift a Rényi loss of at most epsilon at order lambda is the
// same as mu-Gaussian differential privacy with mu = sqrt(2 epsilon/lambda)
// (Dong, Roth and Su; Guerra-Balboa's thesis, ch. 4): no test between two
// hypotheses radius_m apart, say two places, is right more often than
// Phi(mu/2) when both are equally likely a priori.
type Meaning struct {
	GDPMu float64 `json:"gdp_mu"`
	// BestGuessAccuracy is Phi(mu/2): the best possible accuracy of a
	// guess between two places radius_m apart, equally likely beforehand
	// (0.5 is a coin toss).
	BestGuessAccuracy float64 `json:"best_guess_accuracy"`
	Text              string  `json:"text"`
}

// MeaningOf returns the meaning of epsilon at Rényi order lambda for a
// displacement of radius metres, through package accountant's Gaussian
// trade-off function.
func MeaningOf(epsilon, lambda, radius float64) Meaning {
	if !(epsilon >= 0) || !(lambda > 1) {
		return Meaning{}
	}
	mu := math.Sqrt(2 * epsilon / lambda)
	acc := (1 + accountant.GaussianTradeOff{Mu: mu}.TV()) / 2
	return Meaning{GDPMu: mu, BestGuessAccuracy: acc,
		Text: fmt.Sprintf("an adversary who must tell two places %g m apart (equally likely beforehand) guesses right at most %.1f %% of the time (50 %% is a coin toss); "+
			"this is mu-GDP with mu = %.3g", radius, 100*acc, mu)}
}

// GapMeaning renders the prior-posterior gap (cip.PriorPosteriorGap) for
// people: the worst-case change of the adversary's log odds from one
// release, which holds except with probability delta and is therefore
// larger than epsilon; the best guess (MeaningOf) is the plain-words reading.
func GapMeaning(gap, delta float64) string {
	return fmt.Sprintf("prior-posterior gap %.4g at delta %g: except with probability %g, no release moves the odds between two such places more than e^%.4g-fold (a worst case, hence above epsilon)", gap, delta, delta, gap)
}

// classDesign raises a kernel design's noise so that places and the route
// meet the target too, and records the classes' loss factors on nd. t is
// the target loss factor of a displacement of radius r (2 eps/(lambda
// r^2)); ts the person's timestamps.
func (d *designer) classDesign(nd *PersonDesign, ts []float64, t float64) {
	if d.opt.PointsOnly {
		nd.PlacesUncovered = []string{pointsOnlyText}
		return
	}
	// Places: the envelope bound needs alpha >= PlaceFactor/t; the
	// stood-still adversary is the route's bound (below).
	switch d.kind {
	case DesignEnvelope, DesignProportional:
		p, unc := d.env.PlaceFactor()
		if p > 0 {
			if need := p / t * (1 + 1e-12); need > nd.Alpha {
				scale := need / nd.Alpha
				for i := range nd.LossFactors {
					nd.LossFactors[i] /= scale
				}
				nd.Budget *= scale
				nd.MaxVariance *= scale
				if nd.SigmaG != nil {
					nd.SigmaG.ScaleSym(scale, nd.SigmaG)
				}
				nd.Alpha = need
				// Basic secrets are no longer at their bound: the
				// proportional design's exactness is lost.
				nd.Kind = EpsilonUpperBound
			}
			nd.PlaceLossFactor = math.Max(nd.PlaceLossFactor, p/nd.Alpha)
		}
		nd.PlacesUncovered = unc
		nd.PlacesCovered = p > 0
	default:
		nd.PlacesUncovered = []string{"the e3 design is exact for the listed secrets under one prior and does not bound windows moved rigidly against a conditioning adversary; use --design envelope to protect places"}
	}
	// Route: all points moved rigidly; 1' G^-1 1 <= 1/(1/A + beta/q)
	// (harmonic sum over the noise's components), with A the envelope's
	// own bound (cip.LowFrequencyBound over the person's span, +Inf for
	// e3) and q/beta the route component's; beta is the least that meets
	// the target, 0 when the envelope's low frequencies already do.
	q := cip.RouteFactor(ts)
	a := math.Inf(1)
	if d.env != nil && len(ts) > 0 {
		a = cip.LowFrequencyBound(d.env.Components, ts[len(ts)-1]-ts[0]) / nd.Alpha
	}
	nd.RouteVar = 0
	if a > t {
		nd.RouteVar = q * (1/t - 1/a) * (1 + 1e-12) // rounded up: the route loss stays within the target
	}
	nd.RouteLossFactor = 1 / (1/a + nd.RouteVar/q)
	// A stood-still adversary over any window: the same bound (its span
	// and its RouteFactor are at most the person's).
	nd.PlaceLossFactor = math.Max(nd.PlaceLossFactor, nd.RouteLossFactor)
	d.placesEveryLength(nd, ts, t)
	nd.Budget += float64(len(ts)) * nd.RouteVar
	nd.MaxVariance += nd.RouteVar
	if nd.SigmaG != nil {
		if nd.RouteVar == 0 {
			return
		}
		rk := gp.Gram(cip.RouteKernel(), ts)
		rk.ScaleSym(nd.RouteVar, rk)
		nd.SigmaG.AddSym(nd.SigmaG, rk)
	}
}

// placesEveryMember is what the places class says it covers when
// PlacesEveryLength holds (Legend looks for it).
const placesEveryMember = "every Matérn member of prior_family (1/2, 3/2, 5/2)"

// placeBoundEvery returns the largest cip.PlaceConditionalBound, over the
// family's Matérn kernels, of a window of up to the person's span against
// members of every lengthscale up to that span, under the envelope noise
// at nd.Alpha (Envelope.PlaceBound; the route component only lowers the
// loss), and false when no bound applies: no Matérn 1/2 component in the
// noise, no Matérn kernel, or every member longer than the span (those are
// at least as long as every window: PlaceFactor's bound covers them).
// Kernels without a Markov form (RBF) stay uncovered, as the envelope's
// PlaceFactor says.
func (d *designer) placeBoundEvery(nd *PersonDesign, ts []float64) (float64, bool) {
	if !nd.PlacesCovered || d.env == nil || d.env.Proportional || len(ts) == 0 || !cip.HasMatern12(d.env.Components) {
		return 0, false
	}
	span := ts[len(ts)-1] - ts[0]
	if !(span > 0) {
		span = 1 // one time: a window of one point
	}
	b, any := 0.0, false
	for _, k := range d.env.Family.Kernels {
		if _, ok := cip.PlaceNorm(k.Kernel, 1); !ok || k.LengthscaleMin > span {
			continue
		}
		v, err := d.env.PlaceBound(k, span)
		if err != nil {
			return 0, false
		}
		b, any = math.Max(b, v/nd.Alpha), true
	}
	return b, any
}

// placesEveryLength certifies places against the conditioning members of
// every lengthscale, windows of any duration (placeBoundEvery), and
// scales the noise, the envelope and the route component together, until
// that bound meets the target t. It then replaces the bound for members at
// least as long as the window (it covers those windows too). Without
// PlacesEveryLength it only states the bound under the default noise
// (PersonDesign.ShorterPlaceLossFactor): what the places class does not
// cover, as a number.
func (d *designer) placesEveryLength(nd *PersonDesign, ts []float64, t float64) {
	b, ok := d.placeBoundEvery(nd, ts)
	if !ok {
		return
	}
	nd.PlacesEveryScale = 1
	if !d.opt.PlacesEveryLength {
		if b <= nd.PlaceLossFactor {
			// The default noise already meets its own places bound for
			// every member (a person's span of a few lengthscales).
			nd.PlacesEveryLength = true
			return
		}
		nd.ShorterPlaceLossFactor = b
		return
	}
	if b > t {
		scale := b / t * (1 + 1e-12)
		nd.PlacesEveryScale = scale
		for i := range nd.LossFactors {
			nd.LossFactors[i] /= scale
		}
		nd.Budget *= scale
		nd.MaxVariance *= scale
		if nd.SigmaG != nil {
			nd.SigmaG.ScaleSym(scale, nd.SigmaG)
		}
		nd.Alpha *= scale
		nd.RouteVar *= scale
		nd.RouteLossFactor /= scale
		nd.PlaceLossFactor /= scale // PlaceFactor's and the stood-still bound
		b /= scale
		nd.Kind = EpsilonUpperBound
	}
	nd.PlaceLossFactor = math.Max(nd.PlaceLossFactor, b)
	nd.PlacesEveryLength = true
}

// placeScaled reports whether a design's envelope dominates each kernel's
// members by its place bound (cip.EnvelopeOptions.PlaceScaled): for the
// envelope design unless only points are protected.
func (o *Options) placeScaled(design cip.Method) bool {
	return design == DesignEnvelope && !o.PointsOnly
}

// classes builds a person's class certificates from a design.
func (d *designer) classes(nd *PersonDesign, pointsFactor, pointsEps float64) SecretClasses {
	opt := d.opt
	eps := func(l float64) float64 { return opt.Lambda / 2 * opt.Radius * opt.Radius * l }
	c := SecretClasses{
		Points: ClassCertificate{Covered: true, Epsilon: pointsEps, LossFactor: pointsFactor, Kind: nd.Kind,
			Covers: "every point (or every listed secret) displaced by up to radius_m, against every member of prior_family (any mean, any variance of at least the stated one)"},
		Route: ClassCertificate{Covered: true, Epsilon: eps(nd.RouteLossFactor), LossFactor: nd.RouteLossFactor, Kind: EpsilonUpperBound,
			Covers: fmt.Sprintf("all of the person's points moved rigidly by up to radius_m (the parallel street, the same trip elsewhere), against every adversary whatever its prior: "+
				"the loss is 1' SigmaG^-1 1, bounded through the common noise component (Matérn 1/2 at %g s, variance route_noise_m2)", cip.RouteLengthscale)},
	}
	if opt.PointsOnly {
		c.Route = ClassCertificate{NotCovered: pointsOnlyText}
		c.Places = ClassCertificate{NotCovered: pointsOnlyText}
		c.Points.Meaning = MeaningOf(pointsEps, opt.Lambda, opt.Radius)
		return c
	}
	pl := ClassCertificate{Covered: true, Epsilon: eps(nd.PlaceLossFactor), LossFactor: nd.PlaceLossFactor, Kind: EpsilonUpperBound,
		Covers: "any contiguous window of the person's points (a stay, a trip) moved rigidly by up to radius_m, against an adversary who believes the person stood still there (any duration)"}
	switch {
	case nd.PlacesEveryLength:
		pl.Covers += ", and against " + placesEveryMember + " of any lengthscale in its range, conditioning on the window, for windows of any duration up to the person's span " +
			"(the window's conditional mean bounded in the noise's RKHS, frequency by frequency, cip.PlaceConditionalBound; " +
			"proven for Matérn 1/2 and 3/2 members (the 3/2 slope bound at a window's ends by an interval-arithmetic proof); for Matérn 5/2 members it uses slope bounds at a window's ends that were measured numerically, not proven, docs/robust-cip.md section 5)"
	case nd.PlacesCovered:
		pl.Covers += ", and against every member of prior_family whose lengthscale is at least the window's duration, conditioning on the window (spectral domination and the RKHS norm of a constant, cip.PlaceFactor)"
	}
	if f := nd.ShorterPlaceLossFactor; f > 0 {
		e := eps(f)
		pl.ShorterMembers = &ShorterMembers{Epsilon: e, LossFactor: f, Kind: EpsilonUpperBound, Meaning: MeaningOf(e, opt.Lambda, opt.Radius),
			Covers: "any contiguous window of up to the person's span moved rigidly by up to radius_m, against " + placesEveryMember + " of every lengthscale in its range " +
				"(including those shorter than the window, which the class's epsilon does not cover), conditioning on the window, under the noise released " +
				"(cip.PlaceConditionalBound: proven for Matérn 1/2 and 3/2 members (the 3/2 slope bound at a window's ends by an interval-arithmetic proof); for Matérn 5/2 members it uses slope bounds at a window's ends that were measured numerically, not proven, " +
				"docs/robust-cip.md section 5); PlacesEveryLength (--places-every-length) raises the noise until it is within the target"}
		unc := fmt.Sprintf("members of prior_family shorter than the window: epsilon up to %.3g (shorter_members)", e)
		nd.PlacesUncovered = append([]string{unc}, nd.PlacesUncovered...)
	}
	if len(nd.PlacesUncovered) > 0 {
		pl.NotCovered = fmt.Sprint(nd.PlacesUncovered)
		if len(nd.PlacesUncovered) == 1 {
			pl.NotCovered = nd.PlacesUncovered[0]
		}
	}
	c.Places = pl
	for _, cc := range []*ClassCertificate{&c.Points, &c.Places, &c.Route} {
		cc.Meaning = MeaningOf(cc.Epsilon, opt.Lambda, opt.Radius)
	}
	return c
}

const pointsOnlyText = "not requested: the release protects the points alone (PointsOnly, --points-only); a place or the route moved rigidly may be located far better than one point"

// Max returns the largest epsilon over the covered classes.
func (c SecretClasses) Max() float64 {
	m := 0.0
	for _, cc := range []ClassCertificate{c.Points, c.Places, c.Route} {
		if cc.Covered {
			m = math.Max(m, cc.Epsilon)
		}
	}
	return m
}

// worse sets c to the class-wise worst of c and o (for the headline).
func (c *SecretClasses) worse(o SecretClasses) {
	// A person's stays against shorter members: the largest over the
	// persons, whichever person's class the headline takes.
	sm := c.Places.ShorterMembers
	if b := o.Places.ShorterMembers; b != nil && (sm == nil || b.Epsilon > sm.Epsilon) {
		sm = b
	}
	defer func() {
		if c.Places.Covered {
			c.Places.ShorterMembers = sm
		}
	}()
	for _, p := range []struct{ a, b *ClassCertificate }{{&c.Points, &o.Points}, {&c.Places, &o.Places}, {&c.Route, &o.Route}} {
		switch {
		case p.a.Covers == "" && p.a.NotCovered == "": // not set yet
			*p.a = *p.b
		case !p.a.Covered: // a class not covered for one person is not covered
		case !p.b.Covered || p.b.Epsilon > p.a.Epsilon:
			*p.a = *p.b
		}
	}
}

// priorCheck finds the persons of a release whose data the prior was
// fitted on: those with a fix the prior's private corpus index
// (Options.PriorCorpus) matches, or, for a prior of version 3 or below, a
// whole trace whose fingerprint the prior records. One shared fix is
// enough: the fit then read that person's data (docs/fit.md, "The overlap
// check").
type priorCheck struct {
	idx    *trace.CorpusIndex
	legacy map[string]bool // fingerprints of a version <= 3 prior
	// shared and fixes count, per person, the fixes matched and read; hits
	// name the first traces with a match.
	shared, fixes map[string]int
	hits          []string
}

func newPriorCheck(opt Options) (*priorCheck, error) {
	c := &priorCheck{idx: opt.PriorCorpus, shared: map[string]int{}, fixes: map[string]int{}}
	fit := opt.Prior.Fit
	if c.idx != nil {
		if err := bound(opt.Prior, c.idx); err != nil {
			return nil, param.Wrap("prior", "", err)
		}
	}
	if fit != nil && len(fit.Fingerprints) > 0 {
		c.legacy = make(map[string]bool, len(fit.Fingerprints))
		for _, f := range fit.Fingerprints {
			c.legacy[f] = true
		}
	}
	return c, nil
}

// add checks trace t of person uid; label names it in messages. whole
// says t is a whole trace as read (not a chunk of a stream), which a
// version <= 3 prior's fingerprints need.
func (c *priorCheck) add(label, uid string, t *trace.Trace, whole bool) {
	n := 0
	if c.idx != nil {
		n = c.idx.Shared(t)
	}
	if whole && c.legacy[trace.Fingerprint(t)] {
		n = t.Len()
	}
	c.shared[uid] += n
	c.fixes[uid] += t.Len()
	if n > 0 && len(c.hits) < 6 && (whole || c.shared[uid] == n) { // a stream's person once
		c.hits = append(c.hits, fmt.Sprintf("%s: %d of its %d fixes", label, n, t.Len()))
	}
}

// verdict refuses a release with a person whose data the prior was fitted
// on unless opt.AllowPriorOverlap, and returns the certificate's
// PriorCoverage and the persons whose classes are then not covered. A
// person id the corpus also has, with no fix in common, does not refuse
// (ids such as "001" recur across data sets and directories) but is stated
// in PriorCoverage.
func (c *priorCheck) verdict(opt Options, uids []string) (string, map[string]bool, error) {
	if c.idx == nil && c.legacy == nil {
		if f := opt.Prior.Fit; f != nil && f.CorpusIndexed {
			return PriorIndexMissing, nil, nil
		}
		return PriorUnknown, nil, nil
	}
	over := map[string]bool{}
	for _, u := range uids {
		if c.shared[u] > 0 {
			over[u] = true
		}
	}
	if len(over) == 0 {
		var ids []string
		for _, u := range uids {
			if (c.idx != nil && c.idx.HasPerson(u)) || c.legacy[trace.PersonFingerprint(u)] {
				ids = append(ids, fmt.Sprintf("%q", u))
			}
		}
		if len(ids) == 0 {
			return PriorIndependent, nil, nil
		}
		return fmt.Sprintf("independent by content (no fix of the input is in the prior's corpus), but the corpus has a person with the id %s: "+
			"if that is the same person, the prior and its origin depend on their data and the release is not covered", strings.Join(ids, ", ")), nil, nil
	}
	if opt.AllowPriorOverlap {
		return PriorOverlapOverridden, over, nil
	}
	hits := c.hits
	if len(hits) > 5 {
		hits = append(hits[:5], "and more")
	}
	return "", nil, &param.Error{Name: "prior", Value: "", Why: fmt.Sprintf("the prior was fitted on data of the input (%s; matched within %d s and %g degrees against the prior's corpus): "+
		"the prior and its origin would depend on the data released; fit the prior on other people (tracepriv fit), or allow it and have the certificate say the release is not covered (--allow-prior-overlap)",
		strings.Join(hits, "; "), trace.FixTimeToleranceS, trace.FixGridTolerance*trace.FixGridDeg)}
}

// checkPrior is priorCheck over whole traces (each of person traces[i].UID).
func checkPrior(opt Options, uids []string, traces []*trace.Trace) (string, map[string]bool, error) {
	c, err := newPriorCheck(opt)
	if err != nil {
		return "", nil, err
	}
	for i, t := range traces {
		c.add(fmt.Sprintf("trace %d (%s)", i+1, filepath.Base(t.Name)), t.UID, t, true)
	}
	return c.verdict(opt, uids)
}

// uncover makes every class of a person whose data the prior was fitted
// on not covered: the noise was designed from a prior that depends on the
// very values it protects, so no epsilon is certified.
func (c *SecretClasses) uncover() {
	for _, cc := range []*ClassCertificate{&c.Points, &c.Places, &c.Route} {
		*cc = ClassCertificate{Kind: cc.Kind, Covers: cc.Covers, NotCovered: priorOverlapText,
			Meaning: Meaning{Text: "no guarantee: " + priorOverlapText}}
	}
}

const priorOverlapText = "the prior was fitted on data of this person (released with --allow-prior-overlap): the prior, its origin and so the noise depend on the values released"

// publicPrior returns the prior as a certificate records it: without the
// fitting corpus's fingerprints of a version <= 3 prior (they say nothing
// about the noise and let a reader test a trace's membership) and with no
// local absolute path. A version 4 prior has nothing of its corpus's
// traces to remove; the corpus index is never part of a certificate.
func publicPrior(p *prior.Prior) *prior.Prior {
	q := *p
	if p.Fit != nil {
		f := *p.Fit
		f.Fingerprints = nil
		f.Corpus = baseName(f.Corpus)
		q.Fit = &f
	}
	return &q
}

// baseName keeps a name's last element when it is a local absolute path:
// a certificate is published, the layout of the releasing machine is not.
func baseName(name string) string {
	if filepath.IsAbs(name) {
		return filepath.Base(name)
	}
	return name
}

// CoveredClasses names the classes of secrets the headline epsilon
// covers, as "points, places ≤ lengthscale (longer: ε ≤ 2.9), route", or
// "" when none is. Places name what they cover: by default only members
// at least as long as the stay (and the stood-still adversary), with the
// bound against the shorter ones beside it.
func (c *Certificate) CoveredClasses() string {
	places := "places ≤ lengthscale" // stays no longer than the member's lengthscale
	if sp := c.ShorterPlaces(); sp != "" {
		places += " " + sp // the real number beside the headline
	}
	if strings.Contains(c.SecretClasses.Places.Covers, placesEveryMember) {
		places = "places"
	}
	var covered []string
	for _, cc := range []struct {
		name string
		c    ClassCertificate
	}{{"points", c.SecretClasses.Points}, {places, c.SecretClasses.Places}, {"route", c.SecretClasses.Route}} {
		if cc.c.Covered {
			covered = append(covered, cc.name)
		}
	}
	return strings.Join(covered, ", ")
}

// Legend is the certificate in a line, for a map's legend: the epsilon,
// the classes it covers, what it means to a person, the family it holds
// against (FamilyLine: an adversary outside it is stated in Edge, not
// covered by the epsilon), and "NOT PRIVATE" for a seeded release.
func (c *Certificate) Legend() string {
	covered := c.CoveredClasses()
	s := fmt.Sprintf("sanitised: ε ≤ %.3g for %s (%g m; best guess ≤ %.0f %%) against %s",
		c.EpsilonMax, covered, c.RadiusM, 100*c.Meaning.BestGuessAccuracy, c.FamilyLine())
	if covered == "" {
		s = "sanitised: NO GUARANTEE (no class of secrets is covered)"
	}
	if c.PriorCoverage == PriorOverlapOverridden {
		s += "; NOT COVERED: prior fitted on a person released"
	}
	if !c.Private {
		s += "; NOT PRIVATE"
	}
	return s
}

// ShorterPlaces is the legend's note of the places epsilon against members
// shorter than the stay (secret_classes.places.shorter_members), as
// "(longer: ε ≤ 3)", or "" when the class states none. A map whose
// legend cannot hold it can move it to its title.
func (c *Certificate) ShorterPlaces() string {
	sm := c.SecretClasses.Places.ShorterMembers
	if sm == nil || !c.SecretClasses.Places.Covered {
		return ""
	}
	return fmt.Sprintf("(longer: ε ≤ %.2g)", sm.Epsilon)
}

// ReadPrior reads a prior file and, when it is there, the private corpus
// index "tracepriv fit" wrote beside it (prior.CorpusIndexPath), for
// Options.Prior and Options.PriorCorpus. A prior whose index is missing
// is returned with a nil index: the release then states PriorIndexMissing.
func ReadPrior(path string) (*prior.Prior, *trace.CorpusIndex, error) {
	p, err := prior.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	ip := prior.CorpusIndexPath(path)
	x, err := trace.ReadCorpusIndexFile(ip)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := bound(p, x); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", ip, err)
	}
	return p, x, nil
}

// bound checks that x is the corpus index of the prior p (it records p's
// digest).
func bound(p *prior.Prior, x *trace.CorpusIndex) error {
	d, err := p.Digest()
	if err != nil {
		return err
	}
	if x.Prior != d {
		return fmt.Errorf("the corpus index is not this prior's (it was written for the prior %s; this one is %s): "+
			"use the index tracepriv fit wrote beside this prior (%s), or refit", x.Prior, d, prior.CorpusIndexPath("PRIOR.json"))
	}
	return nil
}

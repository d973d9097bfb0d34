package sanitize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// CertificateVersion is the version of the certificate format. Version 5
// names the computation path "path" (Certificate.Path); version 4, which
// called it "method" and is otherwise the same, is still read for one
// release (ReadCertificate). Version 4 states the coordinates the noise is
// added in (Earth-centred, no origin); version 3 certified classes of
// secrets (points, places, route) against a family of several kernels on a
// tangent plane; earlier versions are no longer written or read.
const CertificateVersion = 5

// certificateVersionMethod is the last version whose computation path is
// under the key "method"; ReadCertificate reads it as CertificateVersion.
const certificateVersionMethod = 4

// Values of Certificate.PriorCoverage.
const (
	// PriorIndependent: the prior's fitting corpus shares no fix with the
	// input (by the prior's private corpus index, Options.PriorCorpus), or,
	// for a prior of version 3 or below, no whole trace (by the
	// fingerprints it records).
	PriorIndependent = "independent"
	// PriorUnknown: the prior records no fingerprints, so independence
	// could not be checked.
	PriorUnknown = "unknown: the prior file records no fingerprints of its fitting corpus"
	// PriorIndexMissing: the prior has a private corpus index
	// (prior.FitRecord.CorpusIndex) but the release was not given it, so
	// independence could not be checked.
	PriorIndexMissing = "unknown: the prior's private corpus index (tracepriv fit writes it beside the prior, as PRIOR.corpus.private.json) was not given, so whether the prior was fitted on the persons released could not be checked"
	// PriorOverlapOverridden: the prior was fitted on data of a person
	// released, and the release went ahead on request: that person's
	// classes are not covered (SecretClasses).
	PriorOverlapOverridden = "NOT COVERED: the prior's fitting corpus contains a person released (allowed by request); the prior and its origin depend on their data"
)

// Kinds of epsilon a certificate states.
const (
	// EpsilonExact: the worst loss over the family is attained (the
	// certificate is the exact worst case).
	EpsilonExact = "exact"
	// EpsilonUpperBound: a proven upper bound on the worst loss over the
	// family (spectral domination, cip.Envelope).
	EpsilonUpperBound = "upper_bound"
)

// Certificate is the machine-readable guarantee of one release: the
// headline over every person, then each person's certificate. It is written
// next to the released file and is all an auditor (or the attack of package
// attack) needs to recompute the mechanism: the noise depends only on what
// it records and the released timestamps.
type Certificate struct {
	Version int `json:"version"`
	// Guarantee states in words what is certified and for whom.
	Guarantee string `json:"guarantee"`
	// PrivacyUnit is "person": all traces of one uid in the input are
	// certified jointly, and EpsilonMax is per person.
	PrivacyUnit string `json:"privacy_unit"`
	// EpsilonMax is the worst certified epsilon of any person, over their
	// secrets and every prior of the family; EpsilonKind says whether it is
	// exact or a proven upper bound.
	EpsilonMax    float64 `json:"epsilon_max"`
	EpsilonKind   string  `json:"epsilon_kind"`
	EpsilonTarget float64 `json:"epsilon_target"`
	// SecretClasses are the worst class certificates over the persons:
	// points, places and route; EpsilonMax is the largest covered one.
	SecretClasses SecretClasses `json:"secret_classes"`
	// Meaning says what EpsilonMax means to a person.
	Meaning Meaning `json:"meaning"`
	// Legend is the certificate in one line for people (Legend): the
	// epsilon, its classes and meaning, and the family it holds against.
	LegendText string `json:"legend"`
	// Private is true only when the noise came from crypto/rand; a seeded
	// release is reproducible by anyone with the seed and protects nothing.
	Private bool `json:"private"`
	// PriorCoverage says whether the prior is independent of the persons
	// released (PriorIndependent, PriorUnknown, PriorOverlapOverridden).
	PriorCoverage string  `json:"prior_coverage"`
	Lambda        float64 `json:"lambda"`
	RadiusM       float64 `json:"radius_m"`
	// Delta is the delta at which GapMax, the prior-posterior gap of
	// Meehan and Chaudhuri's Theorem 3.1, is stated.
	Delta  float64 `json:"delta"`
	GapMax float64 `json:"prior_posterior_gap_max"`
	// PriorFamily is the set of adversary priors covered; Prior the prior
	// file as read.
	PriorFamily prior.FamilySet `json:"prior_family"`
	Prior       *prior.Prior    `json:"prior"`
	// Edge states a point's epsilon against the standard kernels just
	// outside PriorFamily (proven upper bounds, worst over the persons;
	// kernel designs only), and EdgeBound how it is computed: what the
	// release promises to adversaries the family does not hold.
	Edge      []Edge `json:"edge,omitempty"`
	EdgeBound string `json:"edge_bound,omitempty"`
	// Origin is a public reference point for maps and attacks (the user's
	// or the prior's, Source OriginNone without either) and its source. The
	// mechanism does not use it: see Coordinates.
	Origin geo.Origin `json:"origin"`
	// Coordinates names the coordinates the noise is added in
	// (CoordinatesECEF).
	Coordinates string `json:"coordinates"`
	// Design is the designer (DesignEnvelope, DesignProportional, DesignE3)
	// and Path the computation path (PathDense, PathLinear), as the
	// command line's --path (version 4 called it "method").
	Design cip.Method `json:"design"`
	Path   Path       `json:"path"`
	// NoiseKernel is the noise kernel per unit of a person's NoiseScaleM2
	// (envelope and proportional designs): the noise of a person is
	// NoiseScaleM2 times its Gram matrix at their timestamps.
	NoiseKernel []KernelTerm `json:"noise_kernel,omitempty"`
	// RouteKernel is the unit-variance route noise kernel (cip.RouteKernel):
	// every person's noise also has RouteNoiseM2 times its Gram matrix.
	RouteKernel KernelTerm `json:"route_noise_kernel"`
	// PointsOnly records Options.PointsOnly: no noise for places and the
	// route (they are then not covered).
	PointsOnly bool `json:"points_only,omitempty"`
	// EnvelopeOverhead is the noise variance relative to noise
	// proportional to one member of the family (1 for proportional).
	EnvelopeOverhead float64 `json:"envelope_overhead,omitempty"`
	// OutputGridM is the grid (metres, in Coordinates) the released
	// positions are rounded to, Sampler how the noise is drawn.
	OutputGridM float64 `json:"output_grid_m"`
	Sampler     string  `json:"sampler"`
	// Randomness is "crypto" or "seeded:N" (not private).
	Randomness string `json:"randomness"`
	// Ledger names the budget ledger the release was charged in (its base
	// name; docs/ledger.md), or says it was not: "off" (--no-ledger) or
	// "not charged: seeded, not private".
	Ledger string `json:"ledger,omitempty"`
	// Timestamps and Dimensions state what is public and how the three
	// Earth-centred coordinates combine.
	Timestamps string `json:"timestamps"`
	Dimensions string `json:"dimensions"`
	// Dropped lists fields removed because they are location information too.
	Dropped []string `json:"dropped,omitempty"`
	// SkippedRows counts input rows skipped or merged while reading (set by
	// the caller that read the input, with RecordInput).
	SkippedRows int `json:"skipped_rows"`
	// SkippedByReason breaks SkippedRows down by the reasons of package
	// trace's dirty-input policy (docs/input.md).
	SkippedByReason map[string]int       `json:"skipped_by_reason"`
	Persons         []*PersonCertificate `json:"persons"`
	Seconds         float64              `json:"seconds"`
}

// KernelTerm is one component of a noise kernel.
type KernelTerm struct {
	Kernel      string  `json:"kernel"`
	Weight      float64 `json:"weight"`
	Lengthscale float64 `json:"lengthscale_s"`
	Period      float64 `json:"period_s,omitempty"`
}

// PersonCertificate is the guarantee of one person's traces.
type PersonCertificate struct {
	UID string `json:"uid"`
	// Points is the number of points of the person, over Traces.
	Points int         `json:"points"`
	Traces []TraceInfo `json:"traces"`
	// EpsilonMax is the worst certified epsilon over the person's secrets
	// and the family, GapMax the matching prior-posterior gap, and
	// EpsilonSumDims Corollary 7.2.1's (conservative) sum over the Dims (3)
	// Earth-centred coordinates, Dims·EpsilonMax, for comparison with the
	// paper.
	EpsilonMax  float64 `json:"epsilon_max"`
	EpsilonKind string  `json:"epsilon_kind"`
	GapMax      float64 `json:"prior_posterior_gap_max"`
	// SecretClasses certifies the person's points, places and route;
	// EpsilonMax is the largest covered class.
	SecretClasses  SecretClasses `json:"secret_classes"`
	EpsilonSumDims float64       `json:"epsilon_sum_of_dimensions"`
	// Secrets summarises the secrets; SecretList lists them (always for
	// listed secrets, on request for every point).
	Secrets    SecretSummary       `json:"secrets"`
	SecretList []SecretCertificate `json:"secret_list,omitempty"`
	// NoiseScaleM2 multiplies the certificate's NoiseKernel (envelope and
	// proportional designs).
	NoiseScaleM2 float64 `json:"noise_scale_m2,omitempty"`
	// NoiseBudgetM2 is tr(SigmaG) per dimension, RMSNoiseM the root mean
	// square planar displacement per point, sqrt(2 tr(SigmaG)/N).
	NoiseBudgetM2 float64 `json:"noise_budget_m2_per_dimension"`
	RMSNoiseM     float64 `json:"rms_noise_m"`
	// RMSOverSingle is RMSNoiseM over the RMS of the least noise for
	// every point a basic secret under one known prior, r sqrt(lambda /
	// epsilon): what the family, the places and the route cost.
	RMSOverSingle float64 `json:"rms_over_single_prior"`
	// RouteNoiseM2 is the variance per coordinate of the route component
	// (RouteKernel), included in NoiseBudgetM2.
	RouteNoiseM2 float64 `json:"route_noise_m2"`
	// LowerBoundM2 is the (E3) designer's proven lower bound on the least
	// budget (0 when not available).
	LowerBoundM2 float64 `json:"lower_bound_m2_per_dimension,omitempty"`
	// Jitter is the certifying factorisation's diagonal jitter (E3), and
	// SamplingJitter the diagonal the sampler's Cholesky factorisation
	// added (certified against its own rounding): the released noise has
	// covariance L L^T with SigmaG + Jitter I <= L L^T <= SigmaG + (Jitter +
	// 2 SamplingJitter) I, never less than certified (the loss can only
	// fall as noise grows). NoiseCovariance returns the matrix factorised,
	// SigmaG + (Jitter + SamplingJitter) I.
	Jitter         float64 `json:"jitter"`
	SamplingJitter float64 `json:"sampling_jitter"`
	// Explanation says which secrets set the noise level and why.
	Explanation string `json:"explanation"`
}

// TraceInfo identifies one trace of a person in the input.
type TraceInfo struct {
	// Index is the trace's position in the input (0-based).
	Index  int       `json:"index"`
	Name   string    `json:"name,omitempty"`
	Points int       `json:"points"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
}

// SecretSummary summarises a person's secrets.
type SecretSummary struct {
	// Spec is "all" (every point a basic secret) or "listed".
	Spec  string `json:"spec"`
	Count int    `json:"count"`
	// EpsilonQuantiles are the 0, 0.5, 0.9, 0.99 and 1 quantiles of the
	// per-secret epsilon. For a person whose points class is not covered
	// (a prior fitted on their data, PriorOverlapOverridden) the
	// per-secret epsilons are what the noise design aimed at, not a
	// guarantee.
	EpsilonQuantiles [5]float64 `json:"epsilon_quantiles"`
	// Tightest lists up to ten secrets with the largest epsilon.
	Tightest []SecretCertificate `json:"tightest"`
}

// SecretCertificate is the guarantee of one secret.
type SecretCertificate struct {
	Times []time.Time `json:"times"`
	// Points are indices into the person's points in time order (over
	// all their traces).
	Points []int `json:"points"`
	// LossFactor is the certified (E1) loss factor per dimension (exact or
	// an upper bound, as the person's EpsilonKind).
	LossFactor float64 `json:"loss_factor"`
	// Epsilon is lambda/2 k r^2 LossFactor, the loss at Lambda of
	// displacements within the radius in ECEF (all three coordinates).
	Epsilon float64 `json:"epsilon"`
	// Gap is the prior-posterior gap of Theorem 3.1 at Delta.
	Gap float64 `json:"prior_posterior_gap"`
}

// Person returns the certificate of the person with the given uid.
func (c *Certificate) Person(uid string) (*PersonCertificate, bool) {
	for _, p := range c.Persons {
		if p.UID == uid {
			return p, true
		}
	}
	return nil, false
}

// RecordInput states on c what reading the input skipped or merged:
// rep's SkippedRows, broken down by reason. The caller that read the
// traces calls it, since Release sees only the traces.
func (c *Certificate) RecordInput(rep *trace.Report) {
	c.SkippedRows = rep.SkippedRows()
	c.SkippedByReason = map[string]int{}
	for k, v := range rep.ByReason() {
		c.SkippedByReason[string(k)] = v
	}
}

// WriteCertificate encodes c as indented JSON.
func WriteCertificate(w io.Writer, c *Certificate) error { return jsondoc.Write(w, c) }

// ReadCertificate decodes a certificate written by WriteCertificate,
// refusing other versions and unknown fields. A version-4 certificate (the
// same layout with the path under "method") is read as the current version,
// for one release, so that releases certified before the rename can still
// be verified and attacked.
func ReadCertificate(r io.Reader) (*Certificate, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if b, err = upgradeMethodKey(b); err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	var c Certificate
	if err := jsondoc.DecodeVersion(b, CertificateVersion, &c); errors.Is(err, jsondoc.ErrVersion) {
		return nil, fmt.Errorf("certificate: %w; re-run tracepriv sanitize", err)
	} else if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	if c.Prior == nil || len(c.Persons) == 0 {
		return nil, fmt.Errorf("certificate: no prior or no person: not a tracepriv sanitize certificate")
	}
	return &c, nil
}

// ReadCertificateFile reads a certificate file, naming it in errors.
func ReadCertificateFile(path string) (*Certificate, error) {
	return jsondoc.ReadFile(path, ReadCertificate)
}

// upgradeMethodKey rewrites a version-4 certificate as the current version:
// its "method" key becomes "path", and nothing else changes. Any other
// document is returned as it is, for DecodeVersion to judge.
func upgradeMethodKey(b []byte) ([]byte, error) {
	var head struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(b, &head) != nil || head.Version != certificateVersionMethod {
		return b, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if _, ok := doc["path"]; ok {
		return nil, fmt.Errorf("a version %d certificate has no \"path\" (it is \"method\" there); fix the version or the key", certificateVersionMethod)
	}
	if m, ok := doc["method"]; ok {
		doc["path"] = m
		delete(doc, "method")
	}
	doc["version"] = json.RawMessage(strconv.Itoa(CertificateVersion))
	return json.Marshal(doc)
}

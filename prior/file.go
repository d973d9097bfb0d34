package prior

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/param"
)

// Version is the version of the prior file format written by
// Prior.Write. Version 4 publishes nothing of any one trace of the fitting
// corpus: no "fit.fingerprints"; what the overlap check needs is in the
// private corpus index beside the file (CorpusIndexPath), whose digest the
// prior records (FitRecord.CorpusIndex). Version 3 states its family as a
// list of kernels ("family": {"kernels": [...]}), as version 4 does; its
// whole-trace fingerprints are still read and checked. Version 2 files,
// one kernel over [lengthscale_min_s, lengthscale_max_s], are still read.
// A file that states no family (version 1, or version 2 without the range)
// is refused by Read: a certificate against one lengthscale silently
// covers almost no adversary (an adversary at a shorter lengthscale breaks
// it).
const Version = 4

// CorpusIndexPath returns where "tracepriv fit" writes the private corpus
// index of the prior file priorPath (trace.CorpusIndex), and where
// "tracepriv sanitize" looks for it: beside the prior, with ".json"
// replaced by ".corpus.private.json" (prior.json: prior.corpus.private.json).
func CorpusIndexPath(priorPath string) string {
	return strings.TrimSuffix(priorPath, ".json") + ".corpus.private.json"
}

// Prior is a family of Gaussian-process priors for the metric coordinates
// of a trace: each coordinate, in metres, is a GP over time in seconds with
// this kernel, a lengthscale anywhere in [LengthscaleMin, LengthscaleMax],
// and any mean. "tracepriv fit" measures it on east and north (a tangent
// plane); "tracepriv sanitize" certifies against it on each Earth-centred
// coordinate (x, y, z), with the coordinates correlated in any way. It is what "tracepriv fit" writes and "tracepriv sanitize"
// reads (PRIOR.json).
//
// A prior is public: it is fitted on a corpus separate from the traces it
// protects, and every noise design derived from it depends only on the
// prior, the timestamps and the privacy targets. A guarantee certified
// against the family holds for every adversary whose prior is a member:
// one lengthscale fitted to a corpus describes the typical adversary, not
// all of them (a shorter lengthscale than the design assumed can raise the
// loss of a design made for one lengthscale by orders of magnitude).
type Prior struct {
	Version int `json:"version"`
	// Kernel is "rbf", "matern32", "matern52" or "periodic" (any name of
	// gp.KernelNames).
	Kernel string `json:"kernel"`
	// Variance is the GP variance per dimension, in square metres. Every
	// CIP loss falls as the prior variance grows, so a certificate at
	// Variance covers every larger variance too; the spectral-envelope
	// designs of package cip do not depend on it at all.
	Variance float64 `json:"variance_m2"`
	// Lengthscale is the nominal lengthscale in seconds (the family's
	// median fit): what an attack assumes by default. It lies in the
	// family.
	Lengthscale float64 `json:"lengthscale_s"`
	// LengthscaleMin and LengthscaleMax bound the family's lengthscales in
	// seconds. Both zero means the family of Lengthscale alone.
	LengthscaleMin float64 `json:"lengthscale_min_s,omitempty"`
	LengthscaleMax float64 `json:"lengthscale_max_s,omitempty"`
	// Period is the period of a periodic kernel, in seconds (fixed: a
	// periodic family varies its lengthscale only).
	Period float64 `json:"period_s,omitempty"`
	// FamilySet is the family of a version 3 or 4 prior: every member of every
	// listed kernel family is an adversary the certificate covers. Kernel
	// and Lengthscale are then the nominal member (the attack's default),
	// and LengthscaleMin and LengthscaleMax are not used.
	FamilySet *FamilySet `json:"family,omitempty"`
	// Origin is a public tangent-plane origin for the region the prior
	// describes (tracepriv fit records the centre of its corpus and no
	// Source; the file is the source): sanitize projects around it when
	// the user gives no --origin. Nil if unknown. It is geo.Origin, the one
	// origin type; files written when it was geo.Origin ({"lat", "lon",
	// "note"}) read and write back byte for byte.
	Origin *geo.Origin `json:"origin,omitempty"`
	// Fit describes how the prior was obtained (informational; nil for a
	// hand-written prior).
	Fit *FitRecord `json:"fit,omitempty"`
}

// FitRecord records how a Prior was fitted on a corpus.
type FitRecord struct {
	// Corpus names the input files or directories, as the published
	// file may: each relative to the working directory when inside it,
	// else by its base name, never an absolute path of the machine,
	// whatever Options.Corpus the fit was given.
	Corpus string `json:"corpus"`
	// Windows is the number of trace windows (per dimension) fitted, and
	// Skipped the number of candidate windows rejected, by reason.
	Windows int            `json:"windows"`
	Skipped map[string]int `json:"skipped,omitempty"`
	// Quantile is the quantile of the per-window fits chosen for the
	// variance (1 - FamilyQuantiles[1]) in version 2; in version 1 the
	// quantile of l_eff chosen for the single lengthscale.
	Quantile float64 `json:"quantile"`
	// FamilyQuantiles are the quantiles of the per-window lengthscales
	// that bound the family (version 2).
	FamilyQuantiles *[2]float64 `json:"family_quantiles,omitempty"`
	// LEff is the chosen effective lengthscale (in samples, Meehan and
	// Chaudhuri's l_eff), and SamplingPeriod the sampling period in
	// seconds that converts it to Lengthscale.
	LEff           float64 `json:"l_eff"`
	SamplingPeriod float64 `json:"sampling_period_s"`
	// LEffQuartiles are the 25th, 50th and 75th percentiles of the
	// per-window l_eff.
	LEffQuartiles [3]float64 `json:"l_eff_quartiles"`
	// LengthscaleQuartilesS are the quartiles of the per-window fitted
	// lengthscales in seconds (version 2).
	LengthscaleQuartilesS *[3]float64 `json:"lengthscale_quartiles_s,omitempty"`
	// Method says what was fitted, e.g. "per-window MLE, paper preprocessing".
	Method string `json:"method"`
	// Fingerprints identified the persons and traces of the fitting
	// corpus in priors of version 3 and below (trace.Fingerprint,
	// trace.PersonFingerprint), which sanitize still checks. They let a
	// reader test whether a trace they hold was in the corpus, so version
	// 4 has none (Validate refuses them) and records CorpusIndex instead.
	Fingerprints []string `json:"fingerprints,omitempty"`
	// CorpusIndexed says that fit wrote a private corpus index beside the
	// prior (trace.CorpusIndex, CorpusIndexPath). The index records the
	// prior's Digest, not the other way round: anything the public file
	// derived from the corpus's fixes (even a hash of all of them) would
	// let whoever holds the whole corpus, or a corpus of one trace, test it.
	CorpusIndexed bool `json:"corpus_indexed,omitempty"`
}

// Family is the set of priors a Prior describes, as a certificate states
// it: one kernel, every lengthscale in [LengthscaleMin, LengthscaleMax]
// seconds, and the least variance covered.
type Family struct {
	Kernel         string  `json:"kernel"`
	LengthscaleMin float64 `json:"lengthscale_min_s"`
	LengthscaleMax float64 `json:"lengthscale_max_s"`
	Period         float64 `json:"period_s,omitempty"`
	// Variance is the least prior variance covered (square metres); every
	// larger variance is covered too. Zero means any variance.
	Variance float64 `json:"variance_min_m2"`
}

// Family returns the family of p's nominal kernel (Kernel): for a version 2
// prior the whole family, for a version 3 or 4 prior the member family of
// FamilySet with that kernel. What a release is certified against is
// Families, the whole set.
func (p *Prior) Family() Family {
	if p.FamilySet != nil {
		for _, f := range p.Families().Kernels {
			if f.Kernel == p.Kernel {
				return f
			}
		}
	}
	f := Family{Kernel: p.Kernel, LengthscaleMin: p.LengthscaleMin, LengthscaleMax: p.LengthscaleMax, Period: p.Period, Variance: p.Variance}
	if f.LengthscaleMin == 0 && f.LengthscaleMax == 0 {
		f.LengthscaleMin, f.LengthscaleMax = p.Lengthscale, p.Lengthscale
	}
	return f
}

// FamilySet is a prior family made of several kernel families: an
// adversary may hold any member of any of them. A certificate states it as
// "prior_family": {"kernels": [{"kernel", "lengthscale_min_s",
// "lengthscale_max_s", ...}, ...]}.
type FamilySet struct {
	Kernels []Family `json:"kernels"`
	// HeldOutCoverage, when the family was fitted (tracepriv fit on a
	// corpus of several persons), is the share of held-out windows whose
	// own preferred kernel (the kernel and lengthscales that won the
	// window's held-out likelihood) the family holds, leaving one person
	// out (prior.LeaveOnePersonOut, docs/fit.md): how much of what the
	// data shows the certificate covers. Nil when not measured.
	HeldOutCoverage *float64 `json:"held_out_coverage,omitempty"`
}

// Families returns the whole family p describes: FamilySet for a version 3 or 4
// prior (a kernel entry with no variance takes p's), the one kernel family
// of Family otherwise.
func (p *Prior) Families() FamilySet {
	if p.FamilySet == nil {
		return FamilySet{Kernels: []Family{p.Family()}}
	}
	out := FamilySet{Kernels: make([]Family, len(p.FamilySet.Kernels)), HeldOutCoverage: p.FamilySet.HeldOutCoverage}
	for i, f := range p.FamilySet.Kernels {
		if f.Variance == 0 {
			f.Variance = p.Variance
		}
		out.Kernels[i] = f
	}
	return out
}

// Single reports whether the set is one kernel at one lengthscale.
func (s FamilySet) Single() bool { return len(s.Kernels) == 1 && s.Kernels[0].Single() }

// Validate reports whether s is a usable family, naming the bad entry.
func (s FamilySet) Validate() error {
	if len(s.Kernels) == 0 {
		return param.Invalid("family", "{}", "lists no kernels")
	}
	seen := map[string]bool{}
	for i, f := range s.Kernels {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("family, kernel %d: %w", i+1, err)
		}
		if seen[f.Kernel] {
			return param.Invalid("kernel", f.Kernel, fmt.Sprintf("family kernel %d is listed twice (give one lengthscale range per kernel)", i+1))
		}
		seen[f.Kernel] = true
	}
	return nil
}

// String describes the set for messages.
func (s FamilySet) String() string {
	parts := make([]string, len(s.Kernels))
	for i, f := range s.Kernels {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// Key is a canonical string of the set, for caches: every field of every
// kernel, the numbers exactly (String rounds them to 4 digits and leaves
// out the variance, so two families a cache must tell apart could share it).
func (s FamilySet) Key() string {
	var b strings.Builder
	for _, f := range s.Kernels {
		fmt.Fprintf(&b, "%q %x %x %x %x;", f.Kernel, math.Float64bits(f.LengthscaleMin), math.Float64bits(f.LengthscaleMax), math.Float64bits(f.Period), math.Float64bits(f.Variance))
	}
	return b.String()
}

// LengthscaleRange returns the least and largest lengthscale of any kernel.
func (s FamilySet) LengthscaleRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, f := range s.Kernels {
		lo, hi = math.Min(lo, f.LengthscaleMin), math.Max(hi, f.LengthscaleMax)
	}
	return lo, hi
}

// Set returns the family as a one-kernel FamilySet.
func (f Family) Set() FamilySet { return FamilySet{Kernels: []Family{f}} }

// Single reports whether the family has one lengthscale.
func (f Family) Single() bool { return f.LengthscaleMin == f.LengthscaleMax }

// Member returns the family's kernel at lengthscale l with the given
// variance.
func (f Family) Member(variance, l float64) (gp.Kernel, error) {
	return gp.NewKernel(f.Kernel, variance, l, f.Period)
}

// Validate reports whether f is a usable family, naming the bad field.
func (f Family) Validate() error {
	if _, err := gp.NewKernel(f.Kernel, 1, 1, math.Max(f.Period, 1)); err != nil {
		return param.Invalid("kernel", fmt.Sprintf("%q", f.Kernel), fmt.Sprintf("must be one of %v", gp.KernelNames))
	}
	if f.Kernel == gp.KernelPeriodic && (!(f.Period > 0) || math.IsInf(f.Period, 0)) {
		return param.Invalid("period_s", f.Period, "a periodic kernel needs a positive, finite period")
	}
	if !(f.LengthscaleMin > 0) || math.IsInf(f.LengthscaleMax, 0) || !(f.LengthscaleMin <= f.LengthscaleMax) {
		return param.Invalid("lengthscale_min_s", fmt.Sprintf("%v (lengthscale_max_s = %v)", f.LengthscaleMin, f.LengthscaleMax), "need 0 < lengthscale_min_s <= lengthscale_max_s < Inf")
	}
	if !(f.Variance >= 0) || math.IsInf(f.Variance, 0) {
		return param.NonNegative("variance_min_m2", f.Variance)
	}
	return nil
}

// String describes the family for messages.
func (f Family) String() string {
	s := fmt.Sprintf("%s, lengthscale in [%.4g, %.4g] s", f.Kernel, f.LengthscaleMin, f.LengthscaleMax)
	if f.Single() {
		s = fmt.Sprintf("%s, lengthscale %.4g s", f.Kernel, f.LengthscaleMin)
	}
	if f.Kernel == gp.KernelPeriodic {
		s += fmt.Sprintf(", period %.4g s", f.Period)
	}
	return s
}

// KernelFunc returns the kernel at the nominal lengthscale, on times in
// seconds.
func (p *Prior) KernelFunc() (gp.Kernel, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return gp.NewKernel(p.Kernel, p.Variance, p.Lengthscale, p.Period)
}

// Validate reports whether p is a usable prior, naming the bad field.
func (p *Prior) Validate() error {
	if p.Version < 1 || p.Version > Version {
		return param.Invalid("version", p.Version, fmt.Sprintf("is not supported (want 1 to %d)", Version))
	}
	if p.Version == 1 && (p.LengthscaleMin != 0 || p.LengthscaleMax != 0 || p.Origin != nil) {
		return param.Invalid("version", p.Version, fmt.Sprintf("version 1 has no lengthscale range or origin; write version %d", Version))
	}
	if p.Version < 3 && p.FamilySet != nil {
		return param.Invalid("family", "{…}", fmt.Sprintf("needs version 3 (version %d states its family with lengthscale_min_s and lengthscale_max_s)", p.Version))
	}
	if p.Version >= 3 && (p.FamilySet == nil || p.LengthscaleMin != 0 || p.LengthscaleMax != 0) {
		return param.Invalid("family", familyShown(p.FamilySet), fmt.Sprintf("a version %d prior states its family as \"family\": {\"kernels\": [{\"kernel\", \"lengthscale_min_s\", \"lengthscale_max_s\"}, ...]} and has no top-level lengthscale_min_s/lengthscale_max_s", p.Version))
	}
	if p.Fit != nil && p.Version >= 4 && len(p.Fit.Fingerprints) > 0 {
		return param.Invalid("fit.fingerprints", fmt.Sprintf("[%d fingerprints]", len(p.Fit.Fingerprints)), fmt.Sprintf("a version %d prior publishes no fingerprints of its corpus (they let a reader test whether a trace was in it); "+
			"the overlap check reads the private corpus index beside the prior (docs/fit.md): remove the field, or refit with tracepriv fit", p.Version))
	}
	if p.Fit != nil && p.Version < 4 && p.Fit.CorpusIndexed {
		return param.Invalid("fit.corpus_indexed", true, fmt.Sprintf("needs version 4, the file is version %d", p.Version))
	}
	switch p.Kernel {
	case gp.KernelRBF, gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52, gp.KernelMatern72:
	case gp.KernelPeriodic:
		if !(p.Period > 0) || math.IsInf(p.Period, 0) {
			return param.Invalid("period_s", p.Period, "a periodic kernel needs a positive, finite period")
		}
	default:
		return param.Invalid("kernel", fmt.Sprintf("%q", p.Kernel), fmt.Sprintf("must be one of %v", gp.KernelNames))
	}
	if !(p.Variance > 0) || math.IsInf(p.Variance, 0) {
		return param.Positive("variance_m2", p.Variance)
	}
	if !(p.Lengthscale > 0) || math.IsInf(p.Lengthscale, 0) {
		return param.Positive("lengthscale_s", p.Lengthscale)
	}
	if (p.LengthscaleMin == 0) != (p.LengthscaleMax == 0) {
		return param.Invalid("lengthscale_max_s", fmt.Sprintf("%v (lengthscale_min_s = %v)", p.LengthscaleMax, p.LengthscaleMin), "give lengthscale_min_s and lengthscale_max_s both or neither")
	}
	if p.FamilySet != nil {
		if err := p.Families().Validate(); err != nil {
			return err
		}
		found := false
		for _, f := range p.FamilySet.Kernels {
			found = found || f.Kernel == p.Kernel
		}
		if !found {
			return param.Invalid("kernel", fmt.Sprintf("%q", p.Kernel), fmt.Sprintf("the nominal kernel is not in the family (%v)", p.Families()))
		}
	}
	f := p.Family()
	if err := f.Validate(); err != nil {
		return err
	}
	if p.Lengthscale < f.LengthscaleMin || p.Lengthscale > f.LengthscaleMax {
		return param.Invalid("lengthscale_s", p.Lengthscale, fmt.Sprintf("is outside the family [%v, %v]", f.LengthscaleMin, f.LengthscaleMax))
	}
	if o := p.Origin; o != nil {
		if math.IsNaN(o.Lat) || math.IsNaN(o.Lon) || o.Lat < -90 || o.Lat > 90 || o.Lon < -180 || o.Lon > 180 {
			return param.Invalid("origin", fmt.Sprintf("(%v, %v)", o.Lat, o.Lon), "is not a WGS84 position")
		}
	}
	return nil
}

// Read decodes and validates a prior. Unknown fields are errors, so
// that a misspelt field is not silently ignored.
func Read(r io.Reader) (*Prior, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var p Prior
	// Errors carry no "prior: " prefix: the caller adds its context once
	// (ReadFile the file's name, the server its field cip.prior).
	if err := jsondoc.Decode(b, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !p.StatesFamily() {
		return nil, param.Invalid("lengthscale_min_s", "(missing)", fmt.Sprintf("the file states no prior family, only the lengthscale %v s; "+
			"a certificate against one lengthscale does not hold for an adversary at another (refit with tracepriv fit, or to certify that one lengthscale alone, "+
			"write version 2 with lengthscale_min_s = lengthscale_max_s = %v)", p.Lengthscale, p.Lengthscale))
	}
	return &p, nil
}

// StatesFamily reports whether p states its family explicitly (version 3,
// or version 2 with a lengthscale range), rather than one lengthscale
// without a range (version 1, or version 2 without
// lengthscale_min_s/lengthscale_max_s), which Read refuses.
func (p *Prior) StatesFamily() bool {
	return p.FamilySet != nil || (p.Version >= 2 && p.LengthscaleMin != 0 && p.LengthscaleMax != 0)
}

// ReadFile reads a prior file, naming the file in errors.
func ReadFile(path string) (*Prior, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Read(f)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return p, nil
}

// FileError is a prior file whose content is not a valid prior: its Err
// (often a *param.Error naming the JSON field) is about the file, not
// about a parameter of the call, so a CLI reports it as bad input.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Digest identifies p: "sha256:" and the hex SHA-256 of its encoding by
// Write. A private corpus index records the digest of its prior
// (trace.CorpusIndex's Prior), so that it is not used with another.
func (p *Prior) Digest() (string, error) {
	h := sha256.New()
	if err := p.Write(h); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Write encodes p as indented JSON.
func (p *Prior) Write(w io.Writer) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return jsondoc.Write(w, p)
}

// Line names the set in one short line for people (a legend, a page, the
// text output): its kernels, the range of their lengthscales and, when
// measured, the share of held-out windows it covers, e.g. "Matérn 1/2,
// 3/2, 5/2 priors 30 s–8.3 d, 95 % of held-out windows".
func (s FamilySet) Line() string {
	var names []string
	matern := ""
	for _, f := range s.Kernels {
		switch f.Kernel {
		case gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52, gp.KernelMatern72:
			nu := map[string]string{gp.KernelMatern12: "1/2", gp.KernelMatern32: "3/2", gp.KernelMatern52: "5/2", gp.KernelMatern72: "7/2"}[f.Kernel]
			if matern == "" {
				matern = "Matérn " + nu
				names = append(names, "")
			} else {
				matern += ", " + nu
			}
		case gp.KernelRBF:
			names = append(names, "RBF")
		default:
			names = append(names, f.Kernel)
		}
	}
	for i := range names {
		if names[i] == "" {
			names[i] = matern
		}
	}
	lo, hi := s.LengthscaleRange()
	line := strings.Join(names, ", ") + " priors " + durationText(lo)
	if hi > lo {
		line += "–" + durationText(hi)
	}
	if s.HeldOutCoverage != nil {
		line += fmt.Sprintf(", %.0f %% of held-out windows", math.Floor(100**s.HeldOutCoverage)) // never rounded up
	}
	return line
}

// durationText writes seconds for people, to two significant figures: in
// seconds below 2 min, minutes below 2 h, hours below 2 d, then days.
func durationText(sec float64) string {
	switch {
	case sec >= 2*86400:
		return fmt.Sprintf("%.2g d", sec/86400)
	case sec >= 2*3600:
		return fmt.Sprintf("%.2g h", sec/3600)
	case sec >= 120:
		return fmt.Sprintf("%.2g min", sec/60)
	}
	return fmt.Sprintf("%.2g s", sec)
}

// familyShown is a family set as an error shows it.
func familyShown(s *FamilySet) any {
	if s == nil {
		return nil
	}
	return s.String()
}

package gp

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// PriorVersion is the version of the prior file format written by
// Prior.Write.
const PriorVersion = 1

// Prior is a Gaussian-process prior class for the metric coordinates of a
// trace: each dimension (east and north, in metres, after projection to a
// local tangent plane) is an independent GP with this kernel over time in
// seconds, and any mean. It is what "tracepriv fit" writes and
// "tracepriv sanitize" reads (PRIOR.json).
//
// A prior is public: it is fitted on a corpus separate from the traces it
// protects, and every noise design derived from it depends only on the
// prior, the timestamps and the privacy targets.
type Prior struct {
	Version int `json:"version"`
	// Kernel is "rbf", "matern32", "matern52" or "periodic".
	Kernel string `json:"kernel"`
	// Variance is the GP variance per dimension, in square metres.
	Variance float64 `json:"variance_m2"`
	// Lengthscale is the kernel lengthscale in seconds.
	Lengthscale float64 `json:"lengthscale_s"`
	// Period is the period of a periodic kernel, in seconds.
	Period float64 `json:"period_s,omitempty"`
	// Fit describes how the prior was obtained (informational; nil for a
	// hand-written prior).
	Fit *PriorFit `json:"fit,omitempty"`
}

// PriorFit records how a Prior was fitted on a corpus.
type PriorFit struct {
	// Corpus names the input files or directory.
	Corpus string `json:"corpus"`
	// Windows is the number of trace windows (per dimension) fitted, and
	// Skipped the number of candidate windows rejected, by reason.
	Windows int            `json:"windows"`
	Skipped map[string]int `json:"skipped,omitempty"`
	// Quantile is the quantile of the per-window fits chosen for the
	// prior.
	Quantile float64 `json:"quantile"`
	// LEff is the chosen effective lengthscale (in samples, Meehan and
	// Chaudhuri's l_eff), and SamplingPeriod the sampling period in
	// seconds that converts it to Lengthscale.
	LEff           float64 `json:"l_eff"`
	SamplingPeriod float64 `json:"sampling_period_s"`
	// LEffQuartiles are the 25th, 50th and 75th percentiles of the
	// per-window l_eff.
	LEffQuartiles [3]float64 `json:"l_eff_quartiles"`
	// Method says what was fitted, e.g. "per-window MLE, paper preprocessing".
	Method string `json:"method"`
}

// KernelFunc returns the kernel the prior describes, on times in seconds.
func (p *Prior) KernelFunc() (Kernel, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch p.Kernel {
	case "rbf":
		return RBF{Variance: p.Variance, Lengthscale: p.Lengthscale}, nil
	case "matern32":
		return Matern32{Variance: p.Variance, Lengthscale: p.Lengthscale}, nil
	case "matern52":
		return Matern52{Variance: p.Variance, Lengthscale: p.Lengthscale}, nil
	default: // "periodic", checked by Validate
		return Periodic{Variance: p.Variance, Lengthscale: p.Lengthscale, Period: p.Period}, nil
	}
}

// Validate reports whether p is a usable prior, naming the bad field.
func (p *Prior) Validate() error {
	if p.Version != PriorVersion {
		return fmt.Errorf("field \"version\": %d is not supported (want %d)", p.Version, PriorVersion)
	}
	switch p.Kernel {
	case "rbf", "matern32", "matern52":
	case "periodic":
		if !(p.Period > 0) || math.IsInf(p.Period, 0) {
			return fmt.Errorf("field \"period_s\": a periodic kernel needs a positive period, got %v", p.Period)
		}
	default:
		return fmt.Errorf("field \"kernel\": %q is not one of rbf, matern32, matern52, periodic", p.Kernel)
	}
	if !(p.Variance > 0) || math.IsInf(p.Variance, 0) {
		return fmt.Errorf("field \"variance_m2\": must be positive and finite, got %v", p.Variance)
	}
	if !(p.Lengthscale > 0) || math.IsInf(p.Lengthscale, 0) {
		return fmt.Errorf("field \"lengthscale_s\": must be positive and finite, got %v", p.Lengthscale)
	}
	return nil
}

// ReadPrior decodes and validates a prior. Unknown fields are errors, so
// that a misspelt field is not silently ignored.
func ReadPrior(r io.Reader) (*Prior, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p Prior
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("prior: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("prior: %w", err)
	}
	return &p, nil
}

// ReadPriorFile reads a prior file, naming the file in errors.
func ReadPriorFile(path string) (*Prior, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadPrior(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "prior: "))
	}
	return p, nil
}

// Write encodes p as indented JSON.
func (p *Prior) Write(w io.Writer) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("prior: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// "tracepriv repro cip-compare" as one call (RunCIPCompare) and its text
// report.

package repro

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// CIPCompareOptions are the settings of a comparison of CIP mechanisms at
// equal MSE: the paper's settings at each of LEffs, and Windows windows of
// real (or the bundled synthetic) traces.
type CIPCompareOptions struct {
	// LEffs are the l_eff of the paper settings (CIPPaperSettings).
	LEffs []float64
	// Data is a GeoLife root directory (users as subdirectories) whose
	// user User gives the windows; empty takes the bundled synthetic
	// sample trace instead, labelled so.
	Data, User string
	// Windows is the number of windows, evenly spread over the traces'
	// windows (0: the paper settings only).
	Windows int
	// PriorFile is the prior of the real traces; empty takes the bundled
	// one, fitted on GeoLife users 001-007 (keep User out of its corpus).
	PriorFile string
	// Epsilon, Lambda and Radius (metres) set the common noise on the
	// real traces: what the optimal design needs for Epsilon at (Lambda,
	// Radius) under the prior (CIPTraceSettings).
	Epsilon, Lambda, Radius float64
	// Out is the directory for compare.json and the plots
	// (WriteCIPCompare); empty writes nothing.
	Out string
	// Src is the randomness (nil: crypto/rand), named in the report.
	// Stream, if set, gives setting i a stream of its own instead (a
	// seeded source is not safe for concurrent use; CIPCompareAll).
	Src    noise.Source
	Stream func(i int) noise.Source
	// Progress, if set, is called after each setting.
	Progress func(done, total int)
}

// RunCIPCompare reads the prior and the traces opt names, runs every
// setting (CIPCompareAll) and writes the report to opt.Out.
func RunCIPCompare(opt CIPCompareOptions) (*CIPCompareReport, error) {
	start := time.Now()
	var pr *prior.Prior
	var err error
	if opt.PriorFile != "" {
		pr, err = prior.ReadFile(opt.PriorFile)
	} else {
		pr, err = prior.Read(bytes.NewReader(sample.Prior))
	}
	if err != nil {
		return nil, fmt.Errorf("prior: %w", err)
	}
	traces, label, err := cipCompareTraces(opt)
	if err != nil {
		return nil, err
	}
	windows, err := CIPTraceSettings(label, traces, pr, opt.Windows, opt.Epsilon, opt.Lambda, opt.Radius)
	if err != nil {
		return nil, err
	}
	settings := append(CIPPaperSettings(opt.LEffs), windows...)
	src := opt.Src
	if src == nil {
		src = noise.Secure()
	}
	stream := opt.Stream
	if stream == nil {
		stream = func(int) noise.Source { return src }
	}
	rows, err := CIPCompareAll(settings, stream, opt.Progress)
	if err != nil {
		return nil, err
	}
	out := &CIPCompareReport{Randomness: noise.Describe(src), Prior: pr, Windows: len(windows), Data: label, Rows: rows}
	if opt.Out != "" {
		// compare.json records no run time: the file depends on the
		// inputs and the seed only.
		if err := WriteCIPCompare(opt.Out, out, opt.LEffs); err != nil {
			return nil, err
		}
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// cipCompareTraces reads the traces the windows are cut from, and names
// where they come from.
func cipCompareTraces(opt CIPCompareOptions) ([]*trace.Trace, string, error) {
	if opt.Data == "" {
		r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{UID: sample.UID, Name: sample.Name})
		var traces []*trace.Trace
		if err == nil {
			traces, err = trace.ReadAll(r)
		}
		if err != nil {
			return nil, "", fmt.Errorf("bundled sample: %w", err)
		}
		return traces, "synthetic sample", nil
	}
	if opt.Windows <= 0 {
		return nil, "GeoLife", nil
	}
	files, _, err := trace.Files(filepath.Join(opt.Data, opt.User))
	if err != nil {
		return nil, "", fmt.Errorf("data: %w", err)
	}
	var traces []*trace.Trace
	if _, err := trace.ReadFiles(files, trace.ReadOptions{}, func(_ string, ts []*trace.Trace) { traces = append(traces, ts...) }); err != nil {
		return nil, "", err
	}
	return traces, "GeoLife", nil
}

// WriteText prints one table per setting: each mechanism's exact loss
// and epsilon beside what the adversary reconstructed.
func (out *CIPCompareReport) WriteText(w io.Writer) error {
	num := func(v *Num) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(float64(*v), 'g', 4, 64)
	}
	last := ""
	for _, r := range out.Rows {
		if r.Setting != last {
			fmt.Fprintf(w, "%s (MSE %.4g per dimension)\n  adversary: %s\n", r.Setting, r.MSE, r.Adversary)
			fmt.Fprintf(w, "  %-36s %10s %10s %8s %10s %10s %10s %17s %7s\n", "mechanism", "loss", "epsilon", "x opt", "post 2sd",
				"reconstr.", "release", "within r rec/rel", "cover")
			last = r.Setting
		}
		mech := r.Mechanism
		if r.GeoIndEpsilonR != nil {
			mech += fmt.Sprintf(" (eps*r %.3g)", *r.GeoIndEpsilonR)
		}
		// A reconstruction worse than the release is not the attack: the
		// adversary can always read the release as it is.
		mark := ""
		if r.AttackReads == "release" {
			mark = "  reconstruction worse than the release: the attack reads the release"
		}
		fmt.Fprintf(w, "  %-36s %10s %10s %8s %10.4g %10.4g %10.4g %7.1f%% %7.1f%% %6.1f%%%s\n", mech, num(r.LossFactor), num(r.Epsilon), num(r.RatioToOptimal),
			r.Posterior2Sigma, r.ReconstructionRMSE, r.ReleaseRMSE, 100*r.ReconstructionWithinR, 100*r.ReleaseWithinR, 100*r.Coverage95, mark)
	}
	fmt.Fprintf(w, "randomness %s; %.1f s\n", out.Randomness, out.Seconds)
	for _, f := range out.Files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	return nil
}

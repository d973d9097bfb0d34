package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

func init() { register(newSanitizeCmd) }

// sanitizeCmd is "tracepriv sanitize": a file (runFile, streamed when it
// can be: runStream) or a directory (runCorpus).
type sanitizeCmd struct {
	env                                                                 *cli.Env
	in, out, priorFile, secrets, certFile, origin, design, path, method string
	noiseOut                                                            string
	eps, lambda, radius, delta                                          float64
	listSecrets, force, pointsOnly, allowOverlap, placesEvery           bool
	rf                                                                  cli.ReadFlags
	led                                                                 cli.LedgerFlags
	workers                                                             int
}

func newSanitizeCmd(env *cli.Env) *cobra.Command {
	c := &sanitizeCmd{env: env}
	long, example := helpMeaning("sanitize", sanitize.MeaningOf(1, 2, 100).Text)
	cmd := &cobra.Command{
		Use:     "sanitize --in TRACE --out TRACE --prior PRIOR.json --epsilon E --lambda L --radius METRES",
		Short:   "Release traces with conditional inferential privacy, certified per person against a prior family",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&c.in, "in", "", "input trace file (CSV, GeoJSON, GPX or PLT)")
	f.StringVar(&c.out, "out", "", "output trace file, written in the input format")
	f.StringVar(&c.priorFile, "prior", "", "prior family file (tracepriv fit writes one)")
	f.Float64Var(&c.eps, "epsilon", 0, "target epsilon for every secret, per person")
	f.Float64Var(&c.lambda, "lambda", 0, "Rényi order lambda > 1")
	f.Float64Var(&c.radius, "radius", 0, "radius r in metres within which secret locations are indistinguishable")
	f.StringVar(&c.secrets, "secrets", "all", "all, a comma-separated list of times (; joins a compound secret), or a file of them")
	f.StringVar(&c.certFile, "certificate", "", "certificate file (default OUT.cert.json)")
	f.StringVar(&c.origin, "origin", "", "public reference point LAT,LON recorded for maps and attacks (default: the prior file's); the release does not use it")
	f.StringVar(&c.design, "design", string(sanitize.DesignAuto), "noise designer: auto, envelope, proportional or e3")
	f.StringVar(&c.path, "path", string(sanitize.PathAuto), "computation path: auto, dense (O(n^3), exact designs) or linear (O(n), state-space noise)")
	// --method was the computation path's flag until "method" came to mean
	// the designer only (issue 35): accepted, hidden, for one release.
	f.StringVar(&c.method, "method", "", "renamed --path")
	f.MarkHidden("method")
	f.StringVar(&c.noiseOut, "noise-out", "", "write the per-dimension noise covariance (CSV matrix, input order; one person, <= 5,000 points)")
	f.Float64Var(&c.delta, "delta", sanitize.DefaultDelta, "delta of the prior-posterior gap stated in the certificate")
	c.rf.Add(cmd)
	c.rf.AddCorpus(f, "with --in DIR, --out DIR mirrors it")
	c.led.Add(f)
	f.BoolVar(&c.listSecrets, "list-secrets", false, "list every secret in the certificate (listed secrets always are)")
	f.BoolVar(&c.force, "force", false, "replace existing output files")
	f.BoolVar(&c.placesEvery, "places-every-length", false, "certify places against every Matérn member of the family, also those shorter than the stay (more noise; docs/robust-cip.md section 5)")
	f.BoolVar(&c.pointsOnly, "points-only", false, "protect the points (or listed secrets) alone, not places and the route (the certificate says they are not covered)")
	f.BoolVar(&c.allowOverlap, "allow-prior-overlap", false, "release even when the prior was fitted on data of the input (a fix shared with the prior's corpus index, PRIOR.corpus.private.json; the certificate then says those persons' classes are not covered)")
	f.IntVar(&c.workers, "workers", 0, "people released in parallel with --in DIR (default: all cores)")
	return cmd
}

// methodRenamed is the warning of the old --method flag.
const methodRenamed = "--method is renamed --path; --method will be removed in the next release"

func (c *sanitizeCmd) run(cmd *cobra.Command) error {
	f := cmd.Flags()
	for _, req := range []string{"in", "out", "prior", "epsilon", "lambda", "radius"} {
		if !f.Changed(req) {
			return usageErrorf("sanitize: --%s is required", req)
		}
	}
	if f.Changed("method") {
		if f.Changed("path") && c.path != c.method {
			return usageErrorf("sanitize: --method %s and --path %s: --method is renamed --path; give --path only", c.method, c.path)
		}
		c.path = c.method
		if !c.env.Quiet {
			fmt.Fprintf(c.env.Stderr, "tracepriv: %s\n", methodRenamed)
		}
	}
	if f.Changed("delta") && !(c.delta > 0 && c.delta < 1) {
		return usageErrorf("sanitize: --delta %v: the prior-posterior gap needs a delta in (0, 1), e.g. 1e-5", c.delta)
	}
	lf, ledgerName, err := c.led.Open(c.env, cmd.Flags(), "sanitize")
	if err != nil {
		return err
	}
	if lf != nil {
		defer lf.Close()
	}
	charge := c.led.Request(budget.CIP, "tracepriv sanitize", c.out)
	charge.Lambda, charge.RadiusM = c.lambda, c.radius
	if st, err := os.Stat(c.in); err == nil && st.IsDir() {
		return c.runCorpus(cmd, lf, ledgerName, charge)
	}
	return c.runFile(lf, ledgerName, charge)
}

// options are the release options of the flags, with the prior read.
func (c *sanitizeCmd) options(ledgerName string) (sanitize.Options, error) {
	pr, pc, err := sanitize.ReadPrior(c.priorFile)
	if err != nil {
		return sanitize.Options{}, fmt.Errorf("sanitize: --prior: %w", err)
	}
	opt := sanitize.Options{Prior: pr, Epsilon: c.eps, Lambda: c.lambda, Radius: c.radius, Delta: c.delta,
		Design: cip.Method(c.design), Path: sanitize.Path(c.path), ListSecrets: c.listSecrets, Source: c.env.Source(),
		PointsOnly: c.pointsOnly, AllowPriorOverlap: c.allowOverlap, PriorCorpus: pc, Ledger: ledgerName, PlacesEveryLength: c.placesEvery}
	if c.origin != "" {
		p, err := geo.ParseLatLon(c.origin)
		if err != nil {
			return opt, usageErrorf("sanitize: --origin: %w", err)
		}
		opt.Origin = &p
	}
	return opt, nil
}

// runFile is sanitize --in FILE: checked, then released under the
// admission policy (budget.Admission): refused before any noise is drawn,
// the target charged immediately before drawing (each person's certified
// epsilon is at most it), settled when the files landed, undone when
// they did not.
func (c *sanitizeCmd) runFile(lf budget.Store, ledgerName string, charge budget.Request) error {
	var adm *budget.Admission
	var fileKey string
	if lf != nil {
		key, err := sanitize.FileReleaseKey(c.out)
		if err != nil {
			return err
		}
		fileKey = key
		charge.Release = fileKey + " " + budget.Nonce()
		adm = budget.NewAdmission(lf, charge)
	}
	ro, err := c.rf.Options(c.in)
	if err != nil {
		return fmt.Errorf("sanitize: --in: %w", err)
	}
	if outFmt, err := trace.FormatFromPath(c.out); err == nil && outFmt != ro.Format {
		return usageErrorf("sanitize: --out %s is %s but the input is %s; the sanitised trace keeps the input format", c.out, outFmt, ro.Format)
	}
	if c.certFile == "" {
		c.certFile = sanitize.CertificatePath(c.out)
	}
	if err := checkOutputs([]string{c.in}, c.force, map[string]string{"--out": c.out, "--certificate": c.certFile, "--noise-out": c.noiseOut}); err != nil {
		return fmt.Errorf("sanitize: %w", err)
	}
	opt, err := c.options(ledgerName)
	if err != nil {
		return err
	}
	if opt.Secrets, err = sanitize.ParseSecrets(c.secrets); err != nil {
		return fmt.Errorf("sanitize: --secrets: %w", err)
	}
	// Options that cannot give a release are reported by their flag
	// before the ledger is consulted.
	if err := opt.Check(); err != nil {
		return fmt.Errorf("sanitize: %w", flagError(err))
	}
	if err := sanitize.SettleLeftovers(lf, fileKey, c.out, c.certFile); err != nil {
		return cli.LedgerError("sanitize", err)
	}
	fr := sanitize.FileRelease{In: c.in, Options: opt, Admission: adm, Report: c.env,
		Files: sanitize.Files{Traces: c.out, Format: ro.Format, Certificate: c.certFile, NoiseCovariance: c.noiseOut}}
	// A CSV file is streamed (two passes, one chunk in memory) when its
	// people's rows are contiguous.
	if ro.Format == trace.CSV && opt.Secrets == nil && c.noiseOut == "" {
		done, cert, err := fr.Stream(ro)
		if err != nil {
			return c.fileError(err)
		}
		if done {
			return c.emit(cert)
		}
	}
	traces, rep, err := c.rf.Read(c.in)
	if err != nil {
		return fmt.Errorf("sanitize: %w", err)
	}
	if len(traces) == 0 {
		return fmt.Errorf("sanitize: %s: no trace", c.in)
	}
	c.env.ReportSkipped(rep)
	c.env.ReportPersons(trace.CountPersons(traces))
	target, err := cli.LedgerTargets(adm, traces, c.eps)
	if err != nil {
		return fmt.Errorf("sanitize: --ledger: %s: %w", c.in, err)
	}
	cert, err := fr.Release(traces, rep, target)
	if err != nil {
		return c.fileError(err)
	}
	return c.emit(cert)
}

// fileError names the flags behind a failed step of a one-file release.
func (c *sanitizeCmd) fileError(err error) error {
	var fe *sanitize.FileReleaseError
	if !errors.As(err, &fe) {
		return err
	}
	var pe *param.Error
	switch {
	case errors.Is(fe.Err, sanitize.ErrNoUID):
		return usageErrorf("sanitize: --ledger: %v: give --uid", fe.Err)
	case fe.Step == sanitize.StepInput:
		return fmt.Errorf("sanitize: --in: %w", fe.Err)
	case fe.Step == sanitize.StepLedger:
		return cli.LedgerError("sanitize", fe.Err)
	case fe.Step == sanitize.StepRelease:
		return fmt.Errorf("%s: %w%s", c.in, flagError(fe.Err), fe.Charge)
	case fe.Step == sanitize.StepWrite && errors.As(fe.Err, &pe) && pe.Name == "NoiseCovariance":
		return usageErrorf("sanitize: --noise-out: %s%s", pe.Why, fe.Charge)
	case fe.Step == sanitize.StepWrite:
		return fmt.Errorf("sanitize: nothing written: %w%s", fe.Err, fe.Charge)
	}
	return fmt.Errorf("sanitize: the release was written, but settling its charge to the certified epsilons failed (it stays at the target, an upper bound): %w", fe.Err)
}

// certificateOutput is sanitize --in FILE --json: the certificate, each
// person with the files read as theirs, as a corpus manifest lists them
// (persons[].files); the certificate file itself is unchanged.
type certificateOutput struct {
	*sanitize.Certificate
	Persons []personOutput `json:"persons"`
}

type personOutput struct {
	*sanitize.PersonCertificate
	// Files are the person's input files, by base name (the one file).
	Files []string `json:"files"`
}

// emit prints a release's certificate (--json) or its summary.
func (c *sanitizeCmd) emit(cert *sanitize.Certificate) error {
	o := certificateOutput{Certificate: cert, Persons: make([]personOutput, len(cert.Persons))}
	for i, p := range cert.Persons {
		o.Persons[i] = personOutput{PersonCertificate: p, Files: []string{filepath.Base(c.in)}}
	}
	return c.env.Emit(o, func(w io.Writer) error {
		if err := cert.WriteText(w); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "wrote %s and %s\n", c.out, c.certFile)
		return err
	})
}

// runCorpus is sanitize --in DIR --out DIR (sanitize.Corpus).
func (c *sanitizeCmd) runCorpus(cmd *cobra.Command, lf budget.Store, ledgerName string, charge budget.Request) error {
	opt, err := c.corpusOptions(cmd, ledgerName)
	if err != nil {
		return err
	}
	// Who the persons are, before anything is charged or drawn.
	persons, merged, err := sanitize.CorpusPersons(opt)
	if err != nil {
		return fmt.Errorf("sanitize: --in: %w", flagError(err))
	}
	c.env.WriteMerged(merged)
	c.env.ReportPersons(persons)
	c.env.HintCorpus(&c.rf, c.in)
	if lf != nil {
		// Each group of people is checked before anything is drawn,
		// charged immediately before it is drawn, and settled when its
		// files land (budget.Admission, in the corpus engine); the key
		// ties a resumed run to the charges an interrupted one left.
		prior, err := infile.ReadFile(c.priorFile)
		if err != nil {
			return fmt.Errorf("sanitize: --prior: %w", err)
		}
		if charge.Release, err = opt.ReleaseKey(prior); err != nil {
			return err
		}
		opt.Admission = budget.NewAdmission(lf, charge)
	}
	m, err := sanitize.Corpus(opt)
	if err != nil && m == nil {
		var re *budget.RefusedError
		if errors.As(err, &re) {
			return cli.LedgerError("sanitize", err)
		}
		return fmt.Errorf("sanitize: %w (nothing was charged for people whose files were not written)", flagError(err))
	}
	if err == nil && lf != nil && !c.env.Quiet {
		for _, p := range m.Persons {
			charge.Epsilon[p.UID] = p.EpsilonMax
		}
		c.env.ReportCharge(lf, charge)
	}
	emitErr := c.env.Emit(m, func(w io.Writer) error {
		if err := m.WriteText(w); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "wrote %s/%s in %.1f s\n", c.out, sanitize.ManifestName, m.Seconds)
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("sanitize: %w", err)
	case emitErr != nil:
		return emitErr
	case len(m.Failed) > 0:
		hint := ""
		if opt.OnePerson {
			hint = fmt.Sprintf("\n(--in %s is one person; if its files are different people's, give --corpus: docs/input.md)", c.in)
		}
		return fmt.Errorf("sanitize: %d files or groups of people could not be released (listed in %s/%s; people whose files did not land were not charged); the rest was%s", len(m.Failed), c.out, sanitize.ManifestName, hint)
	}
	return nil
}

// corpusOptions are the options of a corpus release, refusing the flags
// that are for one file.
func (c *sanitizeCmd) corpusOptions(cmd *cobra.Command, ledgerName string) (sanitize.CorpusOptions, error) {
	if c.secrets != "all" {
		return sanitize.CorpusOptions{}, usageErrorf("sanitize: --secrets: a corpus release protects every point (--secrets all)")
	}
	for _, f := range []string{"noise-out", "certificate"} {
		if cmd.Flags().Changed(f) {
			return sanitize.CorpusOptions{}, usageErrorf("sanitize: --%s is for one file; a corpus release writes its certificates under --out/%s", f, sanitize.CertificatesDir)
		}
	}
	if st, err := os.Stat(c.out); err == nil && !st.IsDir() {
		return sanitize.CorpusOptions{}, usageErrorf("sanitize: --out %s is a file; with --in DIR give an output directory", c.out)
	}
	ro, err := c.rf.Base()
	if err != nil {
		return sanitize.CorpusOptions{}, fmt.Errorf("sanitize: %w", err)
	}
	// The person rule (trace.PersonRule): DIR is one person unless
	// --corpus; a person's subfolders are theirs.
	ro.Root = c.in
	opt := sanitize.CorpusOptions{In: c.in, Out: c.out, GroupWorkers: c.workers, Read: ro, OnePerson: !ro.Corpus}
	if opt.Release, err = c.options(ledgerName); err != nil {
		return opt, err
	}
	opt.Release.ListSecrets = false // listed secrets are per file
	var tick *cli.Ticker
	opt.GroupProgress = func(done, total, pts, totalPts int) {
		if tick == nil {
			tick = c.env.Ticker(total, "sanitize")
		}
		tick.Set(done, fmt.Sprintf("groups of people, %d of %d points", pts, totalPts))
	}
	return opt, nil
}

// flagError rewrites a param.Error to name the command-line flag.
func flagError(err error) error {
	if fe, ok := param.AsFlag(err, nil); ok {
		return &cli.FlagError{Err: fe}
	}
	return err
}

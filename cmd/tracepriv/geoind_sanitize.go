package main

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// maxErrorDefault is --max-error's default: a plan whose noise is
// expected to move each point more than 10 km is refused unless asked for.
const maxErrorDefault = 10000

// geoindSanitizeCmd is "tracepriv geoind sanitize": every point of each
// person's traces through one session per person
// (geoind.SanitizeByPerson), planned, admitted and written with its
// certificate.
type geoindSanitizeCmd struct {
	env          *cli.Env
	g            cli.GeoIndFlags
	in, out      string
	certFile     string
	rf           cli.ReadFlags
	allowPartial bool
	force        bool
	led          cli.LedgerFlags
	every        time.Duration
	maxError     float64
}

func newGeoindSanitizeCmd(env *cli.Env) *cobra.Command {
	c := &geoindSanitizeCmd{env: env}
	long, example := helpMeaning("geoind sanitize", geoind.Meaning(defaultEpsPerMetre))
	cmd := &cobra.Command{
		Use:     "sanitize --in TRACE|DIR --out TRACE --origin LAT,LON [--every D]",
		Short:   "Run IM or PM over every point of each person's traces, one budget per person",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&c.in, "in", "", "input trace file (CSV, GeoJSON, GPX or PLT) or directory of them")
	f.StringVar(&c.out, "out", "", "output trace file (format from extension)")
	f.StringVar(&c.certFile, "certificate", "", "certificate file (default OUT.cert.json)")
	f.DurationVar(&c.every, "every", 0, "thin each trace to one fix per period first (e.g. 60s, 5m): the first fix, then each fix at least this long after the last one kept; 0 keeps every fix")
	f.Float64Var(&c.maxError, "max-error", maxErrorDefault, "refuse a planned release whose expected error exceeds this many metres per point (0: no limit)")
	c.rf.Add(cmd)
	c.rf.AddCorpus(f, "each person has one budget")
	f.BoolVar(&c.allowPartial, "allow-partial", false, "fixed-rate, fixed-utility: write the covered points when a person's budget runs out before their last point")
	f.BoolVar(&c.force, "force", false, "replace --out if it exists")
	c.led.Add(f)
	c.g.Add(f, true)
	return cmd
}

func (c *geoindSanitizeCmd) run(cmd *cobra.Command) error {
	cfg, err := c.check(cmd)
	if err != nil {
		return err
	}
	lf, ledgerName, err := c.led.Open(c.env, cmd.Flags(), "geoind sanitize")
	if err != nil {
		return err
	}
	if lf != nil {
		defer lf.Close()
	}
	read, fileOf, rep, err := c.read()
	if err != nil {
		return err
	}
	person := geoind.PersonByUIDOrFile(func(tr *trace.Trace) string { return fileOf[tr] })
	traces := trace.ThinEach(read, c.every)
	for i, t := range traces {
		fileOf[t] = fileOf[read[i]]
	}
	res := &geoind.ReleaseSummary{Out: c.out, Files: rep.Files, Skipped: rep.Skipped, Deduplicated: rep.Deduplicated,
		InputSummary: rep.Summary(), PointsRead: trace.Points(read), PointsIn: trace.Points(traces), Config: cfg}
	if c.every > 0 {
		res.Every = c.every.String()
		if !c.env.Quiet {
			fmt.Fprintf(c.env.Stderr, "tracepriv: thinned to one fix per %v: %d of %d points kept\n", c.every, res.PointsIn, res.PointsRead)
		}
	}
	hc := cli.GeoIndHints{Cfg: cfg, Read: read, Traces: traces, Person: person, Every: c.every, MaxError: c.maxError}
	if res.Plans, err = c.plan(hc); err != nil {
		return err
	}
	// The admission policy (budget.Admission): each person's session
	// spends at most its budget ε; refuse before any noise is drawn,
	// charge it immediately before drawing, settle it when the files
	// land, undo it when they do not.
	charge := c.led.Request(budget.GeoInd, "tracepriv geoind sanitize", c.out)
	charge.GridM = cfg.Noise.Grid
	adm, target, err := c.admit(lf, charge, cfg, traces)
	if err != nil {
		return err
	}
	src := c.env.Source()
	outs, people, err := geoind.SanitizeByPerson(cfg, traces, person, src)
	if err != nil {
		return fmt.Errorf("geoind sanitize: %s: %w%s", c.in, err, adm.UndoNote())
	}
	partial := res.Summarise(people, src)
	var failure error
	switch {
	case res.PointsReleased == 0:
		failure = fmt.Errorf("geoind sanitize: %s: no point released; %s%s", c.in, c.g.CoverageHint(hc), adm.UndoNote())
	case len(partial) > 0 && !c.allowPartial:
		failure = fmt.Errorf("%w%s", c.g.PartialError(partial, len(people), hc), adm.UndoNote())
	default:
		if err := c.write(res, outs, src, ledgerName, adm); err != nil {
			return err
		}
		if adm != nil {
			charge.Epsilon = target
			c.env.ReportCharge(lf, charge)
		}
	}
	if err := c.env.Emit(res, res.WriteText); err != nil {
		return err
	}
	return failure
}

// check checks the flags and returns the configuration.
func (c *geoindSanitizeCmd) check(cmd *cobra.Command) (geoind.Config, error) {
	if c.in == "" || c.out == "" {
		return geoind.Config{}, usageErrorf("geoind sanitize: --in and --out are required")
	}
	if c.every < 0 {
		return geoind.Config{}, usageErrorf("geoind sanitize: --every %v: want a positive Go duration such as 60s or 5m (0: keep every point)", c.every)
	}
	if !(c.maxError >= 0) || math.IsInf(c.maxError, 1) {
		return geoind.Config{}, usageErrorf("geoind sanitize: --max-error %v: want metres >= 0 (0: no limit)", c.maxError)
	}
	if err := c.g.ChooseManager(cmd.Flags()); err != nil {
		return geoind.Config{}, fmt.Errorf("geoind sanitize: %w", err)
	}
	cfg, err := c.g.Config()
	if err != nil {
		return geoind.Config{}, fmt.Errorf("geoind sanitize: %w", err)
	}
	if _, err := trace.FormatFromPath(c.out); err != nil {
		return geoind.Config{}, fmt.Errorf("geoind sanitize: --out: %w", err)
	}
	if c.certFile == "" {
		c.certFile = sanitize.CertificatePath(c.out)
	}
	if err := checkOutputs([]string{c.in}, c.force, map[string]string{"--out": c.out, "--certificate": c.certFile}); err != nil {
		return geoind.Config{}, fmt.Errorf("geoind sanitize: %w", err)
	}
	return cfg, nil
}

// read reads --in, with the file each trace came from (a trace without
// a uid is the person of its file).
func (c *geoindSanitizeCmd) read() ([]*trace.Trace, map[*trace.Trace]string, *trace.Report, error) {
	var read []*trace.Trace
	fileOf := map[*trace.Trace]string{}
	rep, err := c.rf.ReadEach([]string{c.in}, func(f string, ts []*trace.Trace) {
		for _, tr := range ts {
			fileOf[tr] = f
		}
		read = append(read, ts...)
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("geoind sanitize: --in: %w", err)
	}
	c.env.ReportSkipped(rep)
	return read, fileOf, rep, nil
}

// plan plans each person's release before anything is drawn, refusing a
// plan the configuration cannot release or one over --max-error.
func (c *geoindSanitizeCmd) plan(hc cli.GeoIndHints) ([]geoind.PersonPlan, error) {
	plans, err := geoind.PlanByPerson(hc.Cfg, hc.Traces, hc.Person)
	if err != nil {
		return plans, fmt.Errorf("geoind sanitize: %s: %w", c.in, c.g.PlanError(err, hc))
	}
	w := geoind.WorstPlan(plans)
	if c.g.Manager == "planned" && c.maxError > 0 && w.ExpectedErrorM > c.maxError {
		return plans, &cli.RefusedError{Err: fmt.Errorf("geoind sanitize: %s: %s", c.in, cli.TooNoisy(w, hc))}
	}
	if !c.env.Quiet {
		fmt.Fprintf(c.env.Stderr, "tracepriv: plan (%s): %s, up to %d points each; expected error of fresh noise up to %s per point (%s, at the prior prediction rate)\n",
			hc.Cfg.Manager, cli.Plural(len(plans), "person", "people"), cli.MaxPoints(plans), geoind.Metres(w.ExpectedErrorM), w.Person)
	}
	return plans, nil
}

// admit checks each person's session budget against the ledger and
// charges it, pending, before anything is drawn (a nil Admission without
// a ledger).
func (c *geoindSanitizeCmd) admit(lf budget.Store, charge budget.Request, cfg geoind.Config, traces []*trace.Trace) (*budget.Admission, map[string]float64, error) {
	var adm *budget.Admission
	if lf != nil {
		adm = budget.NewAdmission(lf, charge)
	}
	target, err := cli.LedgerTargets(adm, traces, cfg.Params.Epsilon)
	if err != nil {
		return nil, nil, fmt.Errorf("geoind sanitize: --ledger: %s: %w", c.in, err)
	}
	if err := adm.Charge("", target); err != nil {
		return nil, nil, cli.LedgerError("geoind sanitize", err)
	}
	return adm, target, nil
}

// write writes the released traces and their certificate together
// (geoind.Files), and settles the charge once they landed.
func (c *geoindSanitizeCmd) write(res *geoind.ReleaseSummary, outs []*trace.Trace, src noise.Source, ledgerName string, adm *budget.Admission) error {
	if err := checkFinite("--out", c.out, outs); err != nil {
		return fmt.Errorf("geoind sanitize: %w%s", err, adm.UndoNote())
	}
	outFmt, _ := trace.FormatFromPath(c.out) // checked above
	cert := geoind.NewCertificate(res.Config, res.People, src)
	cert.ThinEvery, cert.Ledger = res.Every, ledgerName
	files := geoind.Files{Traces: c.out, Format: outFmt, Certificate: c.certFile}
	if err := files.Write(outs, cert); err != nil {
		return fmt.Errorf("geoind sanitize: nothing written: %w%s", err, adm.UndoNote())
	}
	res.Written, res.Certificate = true, c.certFile
	// Landed: the session budget stays charged (settled).
	if err := adm.Settle("", nil); err != nil {
		return fmt.Errorf("geoind sanitize: the release was written, but settling its charge failed (it stays, pending): %w", err)
	}
	return nil
}

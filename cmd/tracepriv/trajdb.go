package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

// releaseMechanism is trajdb.NewMechanism with errors that name the flags.
func releaseMechanism(name string, b trajdb.Bounds, nmax int) (trajdb.Mechanism, error) {
	m, err := trajdb.NewMechanism(trajdb.MechanismName(name), b, nmax)
	if err != nil {
		return nil, fmt.Errorf("--mechanism %s: %w", name, err)
	}
	return m, nil
}

func init() { register(newReleaseCmd) }

// releaseCmd is "tracepriv synthesize" (formerly "tracepriv release"): a trajectory database released under
// user-level DP.
type releaseCmd struct {
	env          *cli.Env
	rf           cli.ReadFlags
	u            cli.UniverseFlags
	in, out, mec string
	recon        string
	eps          float64
	nmax         int
	force        bool
}

func newReleaseCmd(env *cli.Env) *cobra.Command {
	c := &releaseCmd{env: env}
	long, example := help("synthesize")
	long = strings.Replace(long, "{{meaning}}", cli.Wrap("What epsilon means, e.g. at --epsilon 1: "+trajdb.Meaning(1)+
		". The text output says it for the epsilon spent.", cli.HelpWidth), 1)
	cmd := &cobra.Command{
		Use:     "synthesize --in DIR --out DIR --mechanism prefix|ngram --epsilon E --cell-m METRES --bbox MINLAT,MINLON,MAXLAT,MAXLON",
		Aliases: []string{"release"}, // its name before synthesize, until the next release
		Short:   "Release a synthetic trajectory database under user-level differential privacy",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.CalledAs() == "release" {
				fmt.Fprintln(cmd.ErrOrStderr(), `tracepriv: warning: "tracepriv release" is now "tracepriv synthesize" (a synthetic trajectory database; sanitize is the CIP release); the old name will be removed in the next release`)
			}
			return c.run(cmd.Flags())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&c.in, "in", "", "directory of traces (PLT, CSV, GeoJSON, GPX), one person per uid or GeoLife user directory; or a sequence file with --alphabet")
	fl.StringVar(&c.out, "out", "", "output directory for trajectories.seq, trajectories.csv and release.json")
	fl.StringVar(&c.mec, "mechanism", "", "prefix or ngram")
	fl.Float64Var(&c.eps, "epsilon", 0, "privacy budget of each person, spent once")
	fl.IntVar(&c.nmax, "n-max", 0, fmt.Sprintf("n-gram tree height, the longest gram counted (ngram only; default %d)", trajdb.DefaultNMax))
	fl.StringVar(&c.recon, "reconstruction", string(trajdb.ReconstructPersons), "ngram only: how the noisy grams become sequences: persons (as many as the noisy counts say there are people, drawn with their starts and lengths), joined (the authors' pieces joined into as many sequences as people, keeping the grams' occurrence counts) or authors (the paper's code: Markov extension and greedy decomposition)")
	fl.BoolVar(&c.force, "force", false, "replace an earlier release in --out")
	c.u.Add(fl)
	c.rf.AddTo(fl)
	for _, f := range []string{"in", "out", "mechanism", "epsilon"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

// mechanism checks the flags and returns the release's space, bounds and
// mechanism.
func (c *releaseCmd) mechanism(f *pflag.FlagSet) (*cli.Space, trajdb.Mechanism, trajdb.Bounds, error) {
	if err := trajdb.CheckEpsilon(c.eps); err != nil {
		return nil, nil, trajdb.Bounds{}, usageErrorf("--%w", err)
	}
	sp, err := c.u.Space()
	if err != nil {
		return nil, nil, trajdb.Bounds{}, err
	}
	b, err := c.u.Bounds()
	if err != nil {
		return nil, nil, b, err
	}
	if err := b.CheckEpsilon(c.eps); err != nil {
		return nil, nil, b, usageErrorf("--max-seqs %d, --max-len %d, --epsilon %g: %w", b.MaxSeqs, b.MaxLen, c.eps, err)
	}
	if c.nmax < 0 {
		return nil, nil, b, usageErrorf("--n-max must be positive (0 for the default %d), got %d", trajdb.DefaultNMax, c.nmax)
	}
	m, err := releaseMechanism(c.mec, b, c.nmax)
	if err != nil {
		return nil, nil, b, err
	}
	if ng, ok := m.(*trajdb.NGram); ok {
		if ng.Reconstruction, err = trajdb.ParseReconstruction(c.recon); err != nil {
			return nil, nil, b, fmt.Errorf("--reconstruction: %w", err)
		}
	} else if f.Changed("reconstruction") {
		return nil, nil, b, usageErrorf("--reconstruction is for --mechanism ngram, not %s", c.mec)
	}
	return sp, m, b, nil
}

func (c *releaseCmd) run(f *pflag.FlagSet) (err error) {
	sp, m, b, err := c.mechanism(f)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if err := checkOutDir(c.in, c.out); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	files := map[string]string{}
	names := []string{trajdb.SeqFile, trajdb.CertificateFile}
	if sp.Grid != nil {
		names = append(names, trajdb.CSVFile) // symbols have no positions
	}
	for _, f := range names {
		files["--out "+f] = filepath.Join(c.out, f)
	}
	// A run that fails leaves no --out it created (a refused run leaves
	// the file system as it found it).
	created, err := atomicfile.MkdirAll(c.out, 0o755)
	if err != nil {
		return fmt.Errorf("release: --out: %w", err)
	}
	defer func() {
		if err != nil {
			atomicfile.RemoveCreated(created)
		}
	}()
	if err := checkOutputs([]string{c.in}, c.force, files); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	src := c.env.Source()
	o := &trajdb.SynthesisReport{Space: sp, Mechanism: m.Name(), Operator: trajdb.SynthesisOperator{Note: trajdb.OperatorNote}}
	if sp.Grid == nil {
		// A symbolic file is counted as it is read: the database is never
		// held in memory.
		o.Synthetic, o.Operator.Sequences, err = trajdb.SynthesizeSequencesFile(m, c.in, trajdb.SeqOptions{Size: sp.Size, Base: sp.Base}, c.eps, src)
		if err != nil {
			return fmt.Errorf("release: --in %s: %w", c.in, err)
		}
	} else {
		db, rep, err := sp.Read(c.env, &c.rf, &c.u, c.in)
		if err != nil {
			return fmt.Errorf("release: --in %s: %w", c.in, err)
		}
		o.Operator.Input, o.InputSummary = rep, rep.Read.Summary()
		bd, err := trajdb.Bound(db, b)
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if o.Synthetic, err = m.Synthesize(bd, c.eps, src); err != nil {
			return fmt.Errorf("release: %w", err)
		}
	}
	if sp.Grid == nil {
		o.InputSummary = (*trace.Report)(nil).Summary()
	}
	mo, _ := c.u.MapOptions()
	o.Certificate = trajdb.NewCertificate(m, o.Synthetic, c.eps, sp.Grid, sp.Size, mo, src)
	if o.Files, err = trajdb.WriteSynthesis(c.out, o.Certificate, sp.Base); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return c.env.Emit(o, o.WriteText)
}

// checkOutDir refuses an output directory that is the input directory or
// inside it, where the next run would read the release as people.
func checkOutDir(in, out string) error {
	ai, ao := absPath(in), absPath(out)
	if ai == ao || strings.HasPrefix(ao, ai+string(filepath.Separator)) {
		return usageErrorf("--out %s is inside --in %s: the release would be read as input next time; write elsewhere", out, in)
	}
	return nil
}

// evaluateOutput is the --json output of evaluate: the comparison, with
// the released database's metrics at the top level, and what was read.
type evaluateOutput struct {
	*trajdb.Comparison
	trace.InputSummary
	Real     string `json:"real"`
	Released string `json:"released"`
	Plot     string `json:"plot,omitempty"`
}

func init() { register(newEvaluateCmd) }

// evaluateCmd is "tracepriv evaluate".
type evaluateCmd struct {
	env                     *cli.Env
	rf                      cli.ReadFlags
	u                       cli.UniverseFlags
	realDir, relDir, plotTo string
	against                 string
	draws                   int
	mopt                    trajdb.MetricOptions
}

func newEvaluateCmd(env *cli.Env) *cobra.Command {
	c := &evaluateCmd{env: env}
	long, example := help("evaluate")
	cmd := &cobra.Command{
		Use:     "evaluate --real DIR --released DIR --cell-m METRES --bbox MINLAT,MINLON,MAXLAT,MAXLON",
		Short:   "Measure a released trajectory database against the real one",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.realDir, "real", "", "directory of the real traces, or their sequence file with --alphabet")
	fl.StringVar(&c.relDir, "released", "", "directory of the release (tracepriv synthesize --out) or of released traces")
	fl.StringVar(&c.against, "against", "all", "compare with all real trajectories, or the bounded ones the mechanism saw")
	fl.IntVar(&c.draws, "uniform-draws", 0, "uniform releases averaged for the uniform baseline (default: 10, fewer for large releases: enough for a million trajectories in all)")
	fl.StringVar(&c.plotTo, "plot", "", "write a bar chart of the metrics (.svg or .png)")
	fl.IntVar(&c.mopt.Queries, "queries", 0, "count queries (default 1000)")
	fl.Uint64Var(&c.mopt.QuerySeed, "query-seed", 0, "seed of the query generator (the same queries for every release compared)")
	fl.IntVar(&c.mopt.TopK, "top-k", 0, "frequent patterns compared (default 100)")
	fl.IntVar(&c.mopt.TripBlock, "trip-block", 0, "take trips' start and end cells in blocks of B x B cells (default 1)")
	c.u.Add(fl)
	c.rf.AddTo(fl)
	for _, f := range []string{"real", "released"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

func (c *evaluateCmd) run(f *pflag.FlagSet) error {
	sp, err := c.u.Space()
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if c.against != "all" && c.against != "bounded" {
		return usageErrorf("evaluate: --against %q: want all or bounded", c.against)
	}
	if c.draws < 0 {
		return usageErrorf("evaluate: --uniform-draws must be at least 1 (0 for the default), got %d", c.draws)
	}
	if err := cli.CheckFigure("--plot", c.plotTo); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if c.plotTo != "" {
		if err := checkOutputs([]string{c.realDir, c.relDir}, true, map[string]string{"--plot": c.plotTo}); err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
	}
	b, err := c.u.Bounds()
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	// The two inputs are read at once (a million sequences each for
	// MSNBC).
	type realRead struct {
		db  *trajdb.DB
		rep *trajdb.MapReport
		err error
	}
	realCh := make(chan realRead, 1)
	go func() {
		db, rep, err := sp.Read(c.env, &c.rf, &c.u, c.realDir)
		realCh <- realRead{db, rep, err}
	}()
	released, err := c.readReleased(sp, &b, f.Changed("max-len") || f.Changed("max-seqs"))
	if err != nil {
		<-realCh
		return fmt.Errorf("evaluate: --released %w", err)
	}
	opt := trajdb.CompareOptions{Metrics: c.mopt, Bounds: b, Bounded: c.against == "bounded", UniformDraws: c.draws, Src: c.env.Source()}
	if opt.UniformDraws == 0 {
		opt.UniformDraws = trajdb.AutoUniformDraws(len(released))
	}
	if sp.Grid != nil {
		opt.Metrics.Universe = sp.Grid
	} else {
		opt.Metrics.Size = sp.Size
	}
	// Steps: the two reads, then the library's (the real side, each
	// release measured).
	tick := c.env.Ticker(2+1+opt.UniformDraws+2, "evaluate")
	tick.Set(1, fmt.Sprintf("read %d released trajectories", len(released)))
	rr := <-realCh
	if rr.err != nil {
		return fmt.Errorf("evaluate: --real %s: %w", c.realDir, rr.err)
	}
	tick.Set(2, fmt.Sprintf("read %d real trajectories of %d persons", rr.db.Len(), len(rr.db.Users)))
	opt.Progress = func(done, _ int, what string) { tick.Set(2+done, what) }
	cmp, err := trajdb.Compare(rr.db, released, opt)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	var read *trace.Report
	if rr.rep != nil {
		read = rr.rep.Read
	}
	o := evaluateOutput{Comparison: cmp, InputSummary: read.Summary(), Real: c.realDir, Released: c.relDir}
	if c.plotTo != "" {
		if err := repro.PlotMetrics(c.plotTo, "released vs real", []string{"released", "uniform", "non-private"},
			[]*trajdb.Metrics{cmp.Metrics, cmp.Baselines[trajdb.BaselineUniform], cmp.Baselines[trajdb.BaselineNonPrivate]}); err != nil {
			return fmt.Errorf("evaluate: --plot: %w", err)
		}
		o.Plot = c.plotTo
	}
	return c.env.Emit(o, func(w io.Writer) error {
		if err := cmp.WriteText(w); err != nil || o.Plot == "" {
			return err
		}
		_, err := fmt.Fprintf(w, "wrote %s\n", o.Plot)
		return err
	})
}

// readReleased reads the released database: its sequences
// (trajdb.ReadReleasedSequences; the release's bounds unless the flags
// give them), or the traces in the directory.
func (c *evaluateCmd) readReleased(sp *cli.Space, b *trajdb.Bounds, boundsGiven bool) ([][]int, error) {
	seqs, cert, found, err := trajdb.ReadReleasedSequences(c.relDir, sp.Grid, sp.Size, sp.Base)
	switch {
	case errors.Is(err, trajdb.ErrOtherSpace):
		return nil, fmt.Errorf("%w; evaluate on the release's grid (--cell-m, --bbox) or alphabet", err)
	case err != nil:
		return nil, err
	case !found:
		db, _, err := sp.Read(c.env, &c.rf, &c.u, c.relDir)
		if err != nil {
			return nil, err
		}
		return db.Sequences(), nil
	}
	if cert != nil && !boundsGiven {
		*b = cert.Bounds
	}
	return seqs, nil
}

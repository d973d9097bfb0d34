package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/repro"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
	"github.com/tracepriv/tracepriv/viz"
)

// universeFlags are the public parameters that turn traces into a
// trajectory database: the grid and the mapping rule, and the
// contribution bounds. None may come from the data.
type universeFlags struct {
	cellM           float64
	bbox            string
	alphabet, base  int
	maxLen, maxSeqs int
	maxGap          time.Duration
	minLen          int
}

func (u *universeFlags) add(f *pflag.FlagSet) {
	f.Float64Var(&u.cellM, "cell-m", 0, "grid cell size in metres (public)")
	f.StringVar(&u.bbox, "bbox", "", "public bounding box MINLAT,MINLON,MAXLAT,MAXLON of the grid (never taken from the data)")
	f.IntVar(&u.alphabet, "alphabet", 0, "symbolic input: the input is a sequence file over symbols 0..N-1 (public N) instead of traces on a grid")
	f.IntVar(&u.base, "base", 0, "symbolic input: the id of the first symbol in the file (1 for MSNBC)")
	def := trajdb.DefaultBounds()
	f.IntVar(&u.maxLen, "max-len", def.MaxLen, "contribution bound: keep the first L cells of each trajectory")
	f.IntVar(&u.maxSeqs, "max-seqs", def.MaxSeqs, "contribution bound: keep each person's first K trajectories")
	f.DurationVar(&u.maxGap, "max-gap", trajdb.DefaultMaxGap, "split a trace where two fixes are further apart in time (negative: never)")
	f.IntVar(&u.minLen, "min-len", 1, "drop trajectories of fewer cells (after collapsing repeats)")
}

func (u *universeFlags) grid() (*trajdb.Grid, error) {
	if u.bbox == "" {
		return nil, usageErrorf("--bbox is required: give the public box MINLAT,MINLON,MAXLAT,MAXLON of the area released (e.g. 39.75,116.15,40.10,116.60 for Beijing)")
	}
	box, err := trace.ParseBBox(u.bbox)
	if pe := (*param.Error)(nil); errors.As(err, &pe) {
		return nil, usageErrorf("--bbox %q: %s", u.bbox, pe.Why)
	} else if err != nil {
		return nil, fmt.Errorf("--bbox %q: %w", u.bbox, err)
	}
	if !(u.cellM > 0) || math.IsInf(u.cellM, 0) {
		return nil, usageErrorf("--cell-m must be a positive number of metres, got %v", u.cellM)
	}
	g, err := trajdb.NewGrid(box, u.cellM)
	if err != nil {
		return nil, fmt.Errorf("--cell-m %g --bbox %s: %w", u.cellM, u.bbox, err)
	}
	return g, nil
}

func (u *universeFlags) bounds() (trajdb.Bounds, error) {
	b := trajdb.Bounds{MaxLen: u.maxLen, MaxSeqs: u.maxSeqs}
	if u.maxLen < 1 {
		return b, usageErrorf("--max-len must be at least 1, got %d", u.maxLen)
	}
	if u.maxSeqs < 1 {
		return b, usageErrorf("--max-seqs must be at least 1, got %d", u.maxSeqs)
	}
	return b, nil
}

func (u *universeFlags) mapOptions() (trajdb.MapOptions, error) {
	if u.minLen < 1 {
		return trajdb.MapOptions{}, usageErrorf("--min-len must be at least 1, got %d", u.minLen)
	}
	gap := u.maxGap
	if gap == 0 {
		return trajdb.MapOptions{}, usageErrorf("--max-gap 0 would split at every fix; give a duration such as 10m, or -1s to never split")
	}
	return trajdb.MapOptions{MaxGap: gap, MinLen: u.minLen}, nil
}

// trajSpace is the location universe of a command: a grid for traces, or
// the alphabet of a symbolic sequence file.
type trajSpace struct {
	grid *trajdb.Grid // nil for symbols
	size int
	base int
}

// space resolves the universe flags: --alphabet for symbolic input, else
// the grid of --cell-m and --bbox.
func (u *universeFlags) space() (*trajSpace, error) {
	if u.alphabet != 0 {
		if u.bbox != "" || u.cellM != 0 {
			return nil, usageErrorf("--alphabet is for symbolic sequence files; --bbox and --cell-m are for traces: give one or the other")
		}
		if u.alphabet < 1 {
			return nil, usageErrorf("--alphabet must be positive, got %d", u.alphabet)
		}
		if u.base < 0 {
			return nil, usageErrorf("--base must be 0 or more, got %d", u.base)
		}
		return &trajSpace{size: u.alphabet, base: u.base}, nil
	}
	g, err := u.grid()
	if err != nil {
		return nil, err
	}
	return &trajSpace{grid: g, size: g.Size()}, nil
}

// read reads a database: a trace directory mapped onto the grid, or a
// symbolic sequence file (then the report is nil).
func (s *trajSpace) read(env *cli.Env, rf *readFlags, u *universeFlags, path string) (*trajdb.DB, *trajdb.MapReport, error) {
	if s.grid != nil {
		return readTrajectories(env, rf, u, s.grid, path)
	}
	db, err := trajdb.ReadSequencesFile(path, trajdb.SeqOptions{Size: s.size, Base: s.base})
	return db, nil, err
}

func (s *trajSpace) String() string {
	if s.grid == nil {
		return fmt.Sprintf("an alphabet of %d symbols", s.size)
	}
	return s.grid.String()
}

// readTrajectories reads the trace directory in and maps it onto g.
func readTrajectories(env *cli.Env, rf *readFlags, u *universeFlags, g *trajdb.Grid, in string) (*trajdb.DB, *trajdb.MapReport, error) {
	ro, err := rf.base()
	if err != nil {
		return nil, nil, err
	}
	mo, err := u.mapOptions()
	if err != nil {
		return nil, nil, err
	}
	db, rep, err := trajdb.FromFiles(g, []string{in}, ro, mo)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in, err)
	}
	if rep.Read != nil {
		reportSkipped(env, rep.Read)
	}
	return db, rep, nil
}

// releaseMechanism is trajdb.NewMechanism with errors that name the flags.
func releaseMechanism(name string, b trajdb.Bounds, nmax int) (trajdb.Mechanism, error) {
	m, err := trajdb.NewMechanism(trajdb.MechanismName(name), b, nmax)
	if err != nil {
		return nil, fmt.Errorf("--mechanism %s: %w", name, err)
	}
	return m, nil
}

// releaseOutput is the --json output of release: the public certificate
// (release.json) apart from what only the operator may see.
type releaseOutput struct {
	Certificate *trajdb.Certificate `json:"certificate"`
	Operator    releaseOperator     `json:"operator"`
	Files       []string            `json:"files"`
	// The rows skipped while reading, at the top level as every command
	// reports them; like Operator, not protected and not published.
	trace.InputSummary
}

// releaseOperator is what release read: counts of the input, not
// protected, never written beside the release.
type releaseOperator struct {
	Note string `json:"note"`
	// Input is the mapping of traces onto the grid; Sequences what a
	// symbolic file held.
	Input     *trajdb.MapReport `json:"input,omitempty"`
	Sequences *trajdb.SeqStats  `json:"sequences,omitempty"`
}

const operatorNote = "counts of the input for the operator (with skipped_rows): not protected, not part of the release"

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			rf           readFlags
			u            universeFlags
			in, out, mec string
			recon        string
			eps          float64
			nmax         int
			force        bool
		)
		c := &cobra.Command{
			Use:     "synthesize --in DIR --out DIR --mechanism prefix|ngram --epsilon E --cell-m METRES --bbox MINLAT,MINLON,MAXLAT,MAXLON",
			Aliases: []string{"release"}, // its name before synthesize, until the next release
			Short:   "Release a synthetic trajectory database under user-level differential privacy",
			Long: `Map a directory of traces onto a public grid, bound what each person
contributes, and release a synthetic trajectory database with the prefix tree
(Chen, Fung and Desai, KDD 2012) or the n-gram tree (Chen, Acs and
Castelluccia, CCS 2012). Both perturb the count of every child of every node
they expand over the whole grid, so the support of the output does not depend
on the data (Guerra-Balboa's thesis, Sec. 3.4).

The guarantee is epsilon-DP at user level, add/remove-one-person: two inputs
are neighbours when one is the other with one person added or removed, with
all of their trajectories (persons are the uid of a trace, or for GeoLife the
user directory); replacing a person's data is two such steps (2 epsilon). The grid (--bbox, --cell-m), the
bounds (--max-len, --max-seqs), the mapping rule (--max-gap, --min-len) and
the mechanism are public and must not be chosen from the data.

` + cli.Wrap("What epsilon means, e.g. at --epsilon 1: "+trajdb.Meaning(1)+
				". The text output says it for the epsilon spent.", cli.HelpWidth) + `

Writes to --out: trajectories.seq (one sequence of cell ids per line),
trajectories.csv (the cell centres, synthetic times) and release.json (the
budget spent per tree level, the public parameters), together or not at all.
What was read and skipped is printed, not written: it is not private. With
--json, "certificate" is release.json (public: epsilon_spent is the guarantee,
worst_path_epsilon what the most expensive tree path spent, n_max the tree's
height) and "operator" the input's counts (not protected).

The n-gram tree turns its noisy grams into sequences by --reconstruction:
persons (the default) releases about as many sequences as there are people,
with their starts and lengths, read off the noisy end counts; authors is the
paper's code (Markov extension and greedy decomposition), which releases
1.6-1.8 million sequences for MSNBC's 989,818 people but keeps the grams'
occurrence counts: its paper_are against the bounded data is 2.8x lower at
epsilon 1 (docs/trajdb.md). They are the two ends of that trade-off. Both are
post-processing: the guarantee is the same. A symbolic file (--alphabet) is
counted as it is read, never held in memory.`,
			Example: `  tracepriv release --in internal/sample --out released-db --mechanism ngram --epsilon 1 --cell-m 5000 --bbox 39.75,116.15,40.10,116.60 --max-len 3 --max-seqs 1
  tracepriv release --in internal/sample --out released-db --mechanism prefix --epsilon 2 --cell-m 5000 --bbox 39.75,116.15,40.10,116.60 --max-len 3 --max-seqs 1 --force --json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) (err error) {
				if cmd.CalledAs() == "release" {
					fmt.Fprintln(cmd.ErrOrStderr(), `tracepriv: warning: "tracepriv release" is now "tracepriv synthesize" (a synthetic trajectory database; sanitize is the CIP release); the old name will be removed in the next release`)
				}
				if err := trajdb.CheckEpsilon(eps); err != nil {
					return usageErrorf("release: --%w", err)
				}
				sp, err := u.space()
				if err != nil {
					return fmt.Errorf("release: %w", err)
				}
				g := sp.grid
				b, err := u.bounds()
				if err != nil {
					return fmt.Errorf("release: %w", err)
				}
				if nmax < 0 {
					return usageErrorf("release: --n-max must be positive (0 for the default %d), got %d", trajdb.DefaultNMax, nmax)
				}
				m, err := releaseMechanism(mec, b, nmax)
				if err != nil {
					return fmt.Errorf("release: %w", err)
				}
				if err := checkOutDir(in, out); err != nil {
					return fmt.Errorf("release: %w", err)
				}
				files := map[string]string{}
				names := []string{trajdb.SeqFile, trajdb.CertificateFile}
				if g != nil {
					names = append(names, trajdb.CSVFile) // symbols have no positions
				}
				for _, f := range names {
					files["--out "+f] = filepath.Join(out, f)
				}
				// A run that fails leaves no --out it created (a refused
				// run leaves the file system as it found it).
				created, err := atomicfile.MkdirAll(out, 0o755)
				if err != nil {
					return fmt.Errorf("release: --out: %w", err)
				}
				defer func() {
					if err != nil {
						atomicfile.RemoveCreated(created)
					}
				}()
				if err := checkOutputs([]string{in}, force, files); err != nil {
					return fmt.Errorf("release: %w", err)
				}
				if ng, ok := m.(*trajdb.NGram); ok {
					if ng.Reconstruction, err = trajdb.ParseReconstruction(recon); err != nil {
						return fmt.Errorf("release: --reconstruction: %w", err)
					}
				} else if cmd.Flags().Changed("reconstruction") {
					return usageErrorf("release: --reconstruction is for --mechanism ngram, not %s", mec)
				}
				src := env.Source()
				var (
					rel   *trajdb.Synthetic
					rep   *trajdb.MapReport
					stats *trajdb.SeqStats
				)
				if g == nil {
					// A symbolic file is counted as it is read: the
					// database is never held in memory.
					rel, stats, err = trajdb.SynthesizeSequencesFile(m, in, trajdb.SeqOptions{Size: sp.size, Base: sp.base}, eps, src)
					if err != nil {
						return fmt.Errorf("release: --in %s: %w", in, err)
					}
				} else {
					var db *trajdb.DB
					if db, rep, err = sp.read(env, &rf, &u, in); err != nil {
						return fmt.Errorf("release: --in %s: %w", in, err)
					}
					bd, err := trajdb.Bound(db, b)
					if err != nil {
						return fmt.Errorf("release: %w", err)
					}
					if rel, err = m.Synthesize(bd, eps, src); err != nil {
						return fmt.Errorf("release: %w", err)
					}
				}
				mo, _ := u.mapOptions()
				cert := trajdb.NewCertificate(m, rel, eps, g, sp.size, mo, src)
				paths, err := trajdb.WriteSynthesis(out, cert, sp.base)
				if err != nil {
					return fmt.Errorf("release: %w", err)
				}
				var read *trace.Report // nil when the input was a sequence file
				if rep != nil {
					read = rep.Read
				}
				o := releaseOutput{Certificate: cert, Files: paths,
					InputSummary: read.Summary(), Operator: releaseOperator{Note: operatorNote, Input: rep, Sequences: stats}}
				return env.Emit(o, func(w io.Writer) error {
					if rep != nil {
						fmt.Fprintf(w, "read: %s\n", rep)
					} else {
						fmt.Fprintf(w, "read: %d sequences of %d persons over %s (%d kept, %d cut to --max-len)\n", stats.Sequences, stats.Persons, sp, stats.Kept, stats.Truncated)
					}
					how := ""
					if rel.Reconstruction != "" {
						how = ", reconstruction " + string(rel.Reconstruction)
					}
					fmt.Fprintf(w, "released %d trajectories with %s at epsilon %g%s (%d levels, %d noisy counts; the most expensive path spent %.6g); randomness %s\n",
						len(rel.Seqs), m.Name(), cert.EpsilonSpent, how, len(rel.Levels), rel.Nodes, rel.WorstPathEpsilon, cert.Randomness)
					for _, l := range rel.Levels {
						fmt.Fprintf(w, "  %s\n", l)
					}
					fmt.Fprintf(w, "what it means: %s\n", trajdb.Meaning(cert.EpsilonSpent))
					_, err := fmt.Fprintf(w, "wrote %s\n", strings.Join(o.Files, ", "))
					return err
				})
			},
		}
		fl := c.Flags()
		fl.StringVar(&in, "in", "", "directory of traces (PLT, CSV, GeoJSON, GPX), one person per uid or GeoLife user directory; or a sequence file with --alphabet")
		fl.StringVar(&out, "out", "", "output directory for trajectories.seq, trajectories.csv and release.json")
		fl.StringVar(&mec, "mechanism", "", "prefix or ngram")
		fl.Float64Var(&eps, "epsilon", 0, "privacy budget of each person, spent once")
		fl.IntVar(&nmax, "n-max", 0, fmt.Sprintf("n-gram tree height, the longest gram counted (ngram only; default %d)", trajdb.DefaultNMax))
		fl.StringVar(&recon, "reconstruction", string(trajdb.ReconstructPersons), "ngram only: how the noisy grams become sequences: persons (as many as the noisy counts say there are people, with their lengths) or authors (the paper's code: Markov extension and greedy decomposition)")
		fl.BoolVar(&force, "force", false, "replace an earlier release in --out")
		u.add(fl)
		rf.addTo(fl)
		for _, f := range []string{"in", "out", "mechanism", "epsilon"} {
			_ = c.MarkFlagRequired(f)
		}
		return c
	})
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

// evaluateOutput is the --json output of evaluate: the released database's
// metrics at the top level, and the reference releases beside them.
type evaluateOutput struct {
	*trajdb.Metrics
	trace.InputSummary
	Real     string `json:"real"`
	Released string `json:"released"`
	// Against is what the real side is: "all" trajectories read, or
	// "bounded" (after the contribution bounds, the mechanisms' input).
	Against   string                                   `json:"against"`
	Bounds    trajdb.Bounds                            `json:"bounds"`
	Baselines map[trajdb.MechanismName]*trajdb.Metrics `json:"baselines"`
	// UniformDraws uniform releases are averaged for the uniform baseline.
	UniformDraws int `json:"uniform_draws"`
	// NotBetterThanUniform lists the metrics on which the release does not
	// beat the uniform baseline; BeatsUniform is true when it is empty.
	NotBetterThanUniform []string `json:"not_better_than_uniform"`
	BeatsUniform         bool     `json:"beats_uniform"`
	Randomness           string   `json:"randomness"`
	Plot                 string   `json:"plot,omitempty"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			rf                      readFlags
			u                       universeFlags
			realDir, relDir, plotTo string
			against                 string
			draws                   int
			mopt                    trajdb.MetricOptions
		)
		c := &cobra.Command{
			Use:   "evaluate --real DIR --released DIR --cell-m METRES --bbox MINLAT,MINLON,MAXLAT,MAXLON",
			Short: "Measure a released trajectory database against the real one",
			Long: `Compare a released trajectory database (the --out of tracepriv release, or any
directory of traces) with the real traces it came from, mapped onto the same
grid, by the measures of the trajectory-synthesis literature: count-query
relative error with a sanity bound (query_are: sequences containing a random
pattern, or visiting a random rectangle of cells), Jensen-Shannon divergence of
the trip (start, end), length and diameter distributions (trip_jsd, length_jsd,
diameter_jsd, in bits), F1 of the top-k frequent patterns (pattern_f1) and
Kendall's tau of location popularity (kendall_tau); and the n-gram paper's
own measures: paper_are (occurrences of 10,000 random sequences of 1 to 6
symbols, sanity bound 0.1 % of the persons) and top_k_precision (share of the
real top-k grams by occurrences found in the released top k). Lower is better
for the errors and divergences, higher for pattern_f1, top_k_precision and
kendall_tau. Progress goes to stderr.

Beside the release it measures two references: a uniform-random release of the
same number of trajectories (the floor: it knows nothing of the data; averaged
over --uniform-draws draws) and the non-private one, the real data after the
contribution bounds (the ceiling). The bounds are read from the release's
release.json when there is one, and from --max-len and --max-seqs otherwise.

The metrics read the real data: they are for the custodian, not for release.`,
			Example: `  tracepriv release --in internal/sample --out released-ngram --mechanism ngram --epsilon 1 --cell-m 5000 --bbox 39.75,116.15,40.10,116.60 --max-len 3 --max-seqs 1 --force
  tracepriv evaluate --real internal/sample --released released-ngram --cell-m 5000 --bbox 39.75,116.15,40.10,116.60 --plot released-ngram-metrics.svg --json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				sp, err := u.space()
				if err != nil {
					return fmt.Errorf("evaluate: %w", err)
				}
				if against != "all" && against != "bounded" {
					return usageErrorf("evaluate: --against %q: want all or bounded", against)
				}
				if draws < 0 {
					return usageErrorf("evaluate: --uniform-draws must be at least 1 (0 for the default), got %d", draws)
				}
				if plotTo != "" {
					if err := checkOutputs([]string{realDir, relDir}, true, map[string]string{"--plot": plotTo}); err != nil {
						return fmt.Errorf("evaluate: %w", err)
					}
				}
				b, err := u.bounds()
				if err != nil {
					return fmt.Errorf("evaluate: %w", err)
				}
				// Steps: the two reads, the real side, then each release
				// measured (the release, the uniform draws, the
				// non-private one).
				// The two inputs are read at once (a million sequences
				// each for MSNBC).
				type realRead struct {
					db  *trajdb.DB
					rep *trajdb.MapReport
					err error
				}
				realCh := make(chan realRead, 1)
				go func() {
					db, rep, err := sp.read(env, &rf, &u, realDir)
					realCh <- realRead{db, rep, err}
				}()
				released, err := readReleased(env, &rf, &u, sp, relDir, &b, cmd.Flags().Changed("max-len") || cmd.Flags().Changed("max-seqs"))
				if err != nil {
					<-realCh
					return fmt.Errorf("evaluate: --released %w", err)
				}
				if draws == 0 {
					draws = autoUniformDraws(len(released))
				}
				tick := env.Ticker(3+draws+2, "evaluate")
				step := 0
				next := func(what string) {
					step++
					tick.Set(step, what)
				}
				next(fmt.Sprintf("read %d released trajectories", len(released)))
				rr := <-realCh
				db, rep := rr.db, rr.rep
				if rr.err != nil {
					return fmt.Errorf("evaluate: --real %s: %w", realDir, rr.err)
				}
				bounded, err := trajdb.NonPrivateBaseline(db, b)
				if err != nil {
					return fmt.Errorf("evaluate: %w", err)
				}
				real := db.Sequences()
				if against == "bounded" {
					real = bounded
				}
				next(fmt.Sprintf("read %d real trajectories of %d persons", len(real), len(db.Users)))
				if sp.grid != nil {
					mopt.Universe = sp.grid
				} else {
					mopt.Size = sp.size
				}
				mopt.Persons = len(db.Users)
				ev, err := trajdb.NewEvaluator(real, mopt)
				if err != nil {
					return fmt.Errorf("evaluate: %w", err)
				}
				next("measured the real trajectories")
				src := env.Source()
				// The measurements are independent: two at a time (the
				// machines this runs on have two cores or more), each
				// uniform draw made inside its own job so that at most two
				// are in memory.
				seeds := make([]noise.Source, draws)
				for i := range seeds {
					seeds[i] = noise.Seeded(noise.Bits(src, 64))
				}
				jobs := make([]func() ([][]int, error), 0, draws+2)
				jobs = append(jobs, func() ([][]int, error) { return released, nil })
				for i := range draws {
					jobs = append(jobs, func() ([][]int, error) {
						return trajdb.UniformSequences(len(released), sp.size, b.MaxLen, seeds[i])
					})
				}
				jobs = append(jobs, func() ([][]int, error) { return bounded, nil })
				results := make([]*trajdb.Metrics, len(jobs))
				errs := make([]error, len(jobs))
				var (
					wg   sync.WaitGroup
					mu   sync.Mutex
					sem  = make(chan struct{}, max(1, min(2, runtime.GOMAXPROCS(0))))
					done = step
				)
				for i, job := range jobs {
					wg.Add(1)
					sem <- struct{}{}
					go func() {
						defer func() { <-sem; wg.Done() }()
						seqs, err := job()
						if err == nil {
							results[i], err = ev.Measure(seqs)
						}
						errs[i] = err
						mu.Lock()
						done++
						tick.Set(done, "releases measured")
						mu.Unlock()
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						return fmt.Errorf("evaluate: %w", err)
					}
				}
				m, us, np := results[0], results[1:1+draws], results[1+draws]
				var read *trace.Report
				if rep != nil {
					read = rep.Read
				}
				o := evaluateOutput{Metrics: m, InputSummary: read.Summary(), Real: realDir, Released: relDir, Against: against, Bounds: b,
					Baselines:    map[trajdb.MechanismName]*trajdb.Metrics{trajdb.BaselineUniform: trajdb.MeanMetrics(us), trajdb.BaselineNonPrivate: np},
					UniformDraws: draws, Randomness: noise.Describe(src)}
				o.NotBetterThanUniform = m.NotBetter(o.Baselines[trajdb.BaselineUniform])
				if o.NotBetterThanUniform == nil {
					o.NotBetterThanUniform = []string{}
				}
				o.BeatsUniform = len(o.NotBetterThanUniform) == 0
				if plotTo != "" {
					if err := plotMetrics(plotTo, "released vs real", []string{"released", "uniform", "non-private"},
						[]*trajdb.Metrics{m, o.Baselines[trajdb.BaselineUniform], np}); err != nil {
						return fmt.Errorf("evaluate: --plot: %w", err)
					}
					o.Plot = plotTo
				}
				return env.Emit(o, func(w io.Writer) error {
					fmt.Fprintf(w, "%d released vs %d real trajectories (%s); lower is better except pattern_f1 and kendall_tau\n", m.Released, m.Real, against)
					fmt.Fprintf(w, "  %-12s %10s %10s %10s\n", "metric", "released", "uniform", "non-private")
					for _, r := range repro.MetricRows(m, o.Baselines[trajdb.BaselineUniform], np) {
						fmt.Fprintf(w, "  %-12s %10.4g %10.4g %10.4g\n", r.Name, r.Values[0], r.Values[1], r.Values[2])
					}
					if o.BeatsUniform {
						fmt.Fprintln(w, "the release beats the uniform baseline on every metric")
					} else {
						fmt.Fprintf(w, "the release does not beat the uniform baseline on: %s\n", strings.Join(o.NotBetterThanUniform, ", "))
					}
					if o.Plot != "" {
						fmt.Fprintf(w, "wrote %s\n", o.Plot)
					}
					return nil
				})
			},
		}
		fl := c.Flags()
		fl.StringVar(&realDir, "real", "", "directory of the real traces, or their sequence file with --alphabet")
		fl.StringVar(&relDir, "released", "", "directory of the release (tracepriv release --out) or of released traces")
		fl.StringVar(&against, "against", "all", "compare with all real trajectories, or the bounded ones the mechanism saw")
		fl.IntVar(&draws, "uniform-draws", 0, "uniform releases averaged for the uniform baseline (default: 10, fewer for large releases: enough for a million trajectories in all)")
		fl.StringVar(&plotTo, "plot", "", "write a bar chart of the metrics (.svg or .png)")
		fl.IntVar(&mopt.Queries, "queries", 0, "count queries (default 1000)")
		fl.Uint64Var(&mopt.QuerySeed, "query-seed", 0, "seed of the query generator (the same queries for every release compared)")
		fl.IntVar(&mopt.TopK, "top-k", 0, "frequent patterns compared (default 100)")
		fl.IntVar(&mopt.TripBlock, "trip-block", 0, "take trips' start and end cells in blocks of B x B cells (default 1)")
		u.add(fl)
		rf.addTo(fl)
		for _, f := range []string{"real", "released"} {
			_ = c.MarkFlagRequired(f)
		}
		return c
	})
}

// autoUniformDraws is --uniform-draws' default for a release of n
// trajectories: 10 draws, fewer when each is large, so that the draws
// hold about a million trajectories in all (at least one). The mean of a
// million uniform trajectories' metrics varies in the third digit at
// most; more draws would only cost time.
func autoUniformDraws(n int) int {
	return max(1, min(10, 1_000_000/max(n, 1)))
}

// readReleased reads a released database from dir: its trajectories.seq
// when there is one (then release.json, if present, must name the same
// grid, and gives the bounds unless the flags did), or the traces in it.
func readReleased(env *cli.Env, rf *readFlags, u *universeFlags, sp *trajSpace, dir string, b *trajdb.Bounds, boundsGiven bool) ([][]int, error) {
	seqPath := filepath.Join(dir, trajdb.SeqFile)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		seqPath = dir // a sequence file
	} else if _, err := os.Stat(seqPath); err != nil {
		db, _, err := sp.read(env, rf, u, dir)
		if err != nil {
			return nil, err
		}
		return db.Sequences(), nil
	}
	certPath := filepath.Join(filepath.Dir(seqPath), trajdb.CertificateFile)
	if _, err := os.Stat(certPath); err != nil || filepath.Base(seqPath) != trajdb.SeqFile {
		// A sequence file outside a release: the flags say its alphabet
		// and base.
		db, err := trajdb.ReadSequencesFile(seqPath, trajdb.SeqOptions{Size: sp.size, Base: sp.base})
		if err != nil {
			return nil, err
		}
		return db.Sequences(), nil
	}
	cert, err := trajdb.ReadSynthesis(filepath.Dir(seqPath))
	if err != nil {
		return nil, err
	}
	if !cert.SameSpace(sp.grid, sp.size) {
		where := fmt.Sprintf("an alphabet of %d symbols", cert.Alphabet)
		if cert.Universe != nil {
			where = cert.Universe.String()
		}
		return nil, fmt.Errorf("%s: released on %s, but the flags give %s; evaluate on the release's grid (--cell-m, --bbox) or alphabet", dir, where, sp)
	}
	if !boundsGiven {
		*b = cert.Bounds
	}
	return cert.Seqs, nil
}

// plotMetrics draws the metrics of several releases side by side, as
// errors (lower is better): the two count-query errors in their own
// panel, the divergences, 1 - pattern F1, 1 - top-k precision and
// (1 - tau)/2 in [0, 1] in the other.
func plotMetrics(path, title string, labels []string, ms []*trajdb.Metrics) error {
	rows := repro.MetricRows(ms...)
	var scoreNames, areNames []string
	are := make([]viz.BarSeries, len(ms))
	score := make([]viz.BarSeries, len(ms))
	for i := range ms {
		are[i].Label, score[i].Label = labels[i], labels[i]
	}
	for _, r := range rows {
		for i, v := range r.Values {
			switch r.Name {
			case "query_are", "paper_are":
				are[i].Values = append(are[i].Values, v)
			case "pattern_f1", "top_k_precision":
				score[i].Values = append(score[i].Values, 1-v)
			case "kendall_tau":
				score[i].Values = append(score[i].Values, (1-v)/2)
			default:
				score[i].Values = append(score[i].Values, v)
			}
		}
		switch r.Name {
		case "query_are":
			areNames = append(areNames, "query ARE")
		case "paper_are":
			areNames = append(areNames, "paper ARE")
		case "pattern_f1":
			scoreNames = append(scoreNames, "1 − F1")
		case "top_k_precision":
			scoreNames = append(scoreNames, "1 − top-k precision")
		case "kendall_tau":
			scoreNames = append(scoreNames, "(1 − τ)/2")
		default:
			scoreNames = append(scoreNames, strings.TrimSuffix(r.Name, "_jsd")+" JSD")
		}
	}
	// The uniform baseline's count-query error can be orders of magnitude
	// above the release's: a log axis, with every bar's value written on
	// it, keeps both readable.
	pa, err := viz.Bars(areNames, are, viz.BarOptions{Title: title + ": count queries", YLabel: "relative error (lower is better)", LogY: true, ValueLabels: true})
	if err != nil {
		return err
	}
	ps, err := viz.Bars(scoreNames, score, viz.BarOptions{Title: title + ": distributions and patterns", YLabel: "error in [0, 1] (lower is better)", YMax: 1.1, ValueLabels: true})
	if err != nil {
		return err
	}
	return viz.SaveRow(path, 0, 0, pa, ps)
}

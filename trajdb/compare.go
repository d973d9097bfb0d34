package trajdb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
)

// Comparison is a released database measured against the real one (its
// Metrics) beside two references: a uniform-random release of the same
// number of trajectories (the floor: it knows nothing of the data) and
// the non-private one, the real data after the contribution bounds (the
// ceiling). The metrics read the real data: they are for the custodian,
// not for release. It is the JSON of "tracepriv evaluate".
type Comparison struct {
	*Metrics
	// Against is what the real side is: "all" trajectories read, or
	// "bounded" (after the contribution bounds, the mechanisms' input).
	Against   string                     `json:"against"`
	Bounds    Bounds                     `json:"bounds"`
	Baselines map[MechanismName]*Metrics `json:"baselines"`
	// UniformDraws uniform releases are averaged for the uniform baseline.
	UniformDraws int `json:"uniform_draws"`
	// NotBetterThanUniform lists the metrics on which the release does not
	// beat the uniform baseline; BeatsUniform is true when it is empty.
	NotBetterThanUniform []string `json:"not_better_than_uniform"`
	BeatsUniform         bool     `json:"beats_uniform"`
	Randomness           string   `json:"randomness"`
}

// CompareOptions configures Compare.
type CompareOptions struct {
	// Metrics are the metrics' options; Compare sets Persons to the real
	// database's.
	Metrics MetricOptions
	// Bounds are the contribution bounds of the non-private baseline (and
	// of the real side with Bounded).
	Bounds Bounds
	// Bounded compares with the bounded real trajectories the mechanism
	// saw instead of all of them.
	Bounded bool
	// UniformDraws uniform releases are averaged; zero means
	// AutoUniformDraws of the release.
	UniformDraws int
	// Src draws the uniform releases; nil means noise.Secure().
	Src noise.Source
	// Progress, if set, is called after each step: the real side
	// measured, then each release measured, of 1 + UniformDraws + 2.
	Progress func(done, total int, what string)
}

// AutoUniformDraws is the default number of uniform draws for a release
// of n trajectories: 10, fewer when each is large, so that the draws hold
// about a million trajectories in all (at least one). The mean of a
// million uniform trajectories' metrics varies in the third digit at most;
// more draws would only cost time.
func AutoUniformDraws(n int) int {
	return max(1, min(10, 1_000_000/max(n, 1)))
}

// Compare measures released against db and the two references. The
// measurements are independent: two at a time (the machines this runs on
// have two cores or more), each uniform draw made inside its own job so
// that at most two are in memory.
func Compare(db *DB, released [][]int, opt CompareOptions) (*Comparison, error) {
	if opt.UniformDraws < 0 {
		return nil, param.Invalid("UniformDraws", opt.UniformDraws, "must be at least 1 (0 for the default)")
	}
	draws := opt.UniformDraws
	if draws == 0 {
		draws = AutoUniformDraws(len(released))
	}
	src := opt.Src
	if src == nil {
		src = noise.Secure()
	}
	total := 1 + draws + 2
	progress := func(done int, what string) {
		if opt.Progress != nil {
			opt.Progress(done, total, what)
		}
	}
	bounded, err := NonPrivateBaseline(db, opt.Bounds)
	if err != nil {
		return nil, err
	}
	real, against := db.Sequences(), "all"
	if opt.Bounded {
		real, against = bounded, "bounded"
	}
	mopt := opt.Metrics
	mopt.Persons = len(db.Users)
	ev, err := NewEvaluator(real, mopt)
	if err != nil {
		return nil, err
	}
	progress(1, "measured the real trajectories")
	size := mopt.Size
	if size == 0 && mopt.Universe != nil {
		size = mopt.Universe.Size()
	}
	seeds := make([]noise.Source, draws)
	for i := range seeds {
		seeds[i] = noise.Seeded(noise.Bits(src, 64))
	}
	jobs := make([]func() ([][]int, error), 0, draws+2)
	jobs = append(jobs, func() ([][]int, error) { return released, nil })
	for i := range draws {
		jobs = append(jobs, func() ([][]int, error) {
			return UniformSequences(len(released), size, opt.Bounds.MaxLen, seeds[i])
		})
	}
	jobs = append(jobs, func() ([][]int, error) { return bounded, nil })
	results, err := measureAll(ev, jobs, func(done int) { progress(1+done, "releases measured") })
	if err != nil {
		return nil, err
	}
	m, us, np := results[0], results[1:1+draws], results[1+draws]
	c := &Comparison{Metrics: m, Against: against, Bounds: opt.Bounds, UniformDraws: draws, Randomness: noise.Describe(src),
		Baselines: map[MechanismName]*Metrics{BaselineUniform: MeanMetrics(us), BaselineNonPrivate: np}}
	c.NotBetterThanUniform = m.NotBetter(c.Baselines[BaselineUniform])
	if c.NotBetterThanUniform == nil {
		c.NotBetterThanUniform = []string{}
	}
	c.BeatsUniform = len(c.NotBetterThanUniform) == 0
	return c, nil
}

// measureAll measures each job's sequences, two at a time.
func measureAll(ev *Evaluator, jobs []func() ([][]int, error), done func(int)) ([]*Metrics, error) {
	results := make([]*Metrics, len(jobs))
	errs := make([]error, len(jobs))
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, max(1, min(2, runtime.GOMAXPROCS(0))))
		n   int
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
			n++
			done(n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// WriteText writes the comparison for people: a table of every metric of
// the release and the two references, and the metrics on which the
// release does not beat the uniform baseline.
func (c *Comparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d released vs %d real trajectories (%s); lower is better except pattern_f1 and kendall_tau\n", c.Released, c.Real, c.Against)
	fmt.Fprintf(w, "  %-12s %10s %10s %10s\n", "metric", "released", "uniform", "non-private")
	uni, np := scoreMap(c.Baselines[BaselineUniform]), scoreMap(c.Baselines[BaselineNonPrivate])
	for _, s := range c.Scores() {
		u, ok1 := uni[s.Name]
		n, ok2 := np[s.Name]
		if ok1 && ok2 {
			fmt.Fprintf(w, "  %-12s %10.4g %10.4g %10.4g\n", s.Name, s.Value, u, n)
		}
	}
	var err error
	if c.BeatsUniform {
		_, err = fmt.Fprintln(w, "the release beats the uniform baseline on every metric")
	} else {
		_, err = fmt.Fprintf(w, "the release does not beat the uniform baseline on: %s\n", strings.Join(c.NotBetterThanUniform, ", "))
	}
	return err
}

func scoreMap(m *Metrics) map[string]float64 {
	out := map[string]float64{}
	if m != nil {
		for _, s := range m.Scores() {
			out[s.Name] = s.Value
		}
	}
	return out
}

// ErrOtherSpace is wrapped by ReadReleasedSequences when a release was
// made on another grid or alphabet than the one it is read on.
var ErrOtherSpace = errors.New("released on another grid or alphabet")

// ReadReleasedSequences reads released sequences at path: a release
// directory's (or its SeqFile's) sequences, with the release's
// Certificate, which must name the same space (g, or an alphabet of size);
// or a sequence file outside a release over an alphabet of size from base
// (cert nil). found is false when path holds neither: a directory of
// released traces, for the caller to read.
func ReadReleasedSequences(path string, g *Grid, size, base int) (seqs [][]int, cert *Certificate, found bool, err error) {
	seqPath := filepath.Join(path, SeqFile)
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		seqPath = path // a sequence file
	} else if _, err := os.Stat(seqPath); err != nil {
		return nil, nil, false, nil
	}
	certPath := filepath.Join(filepath.Dir(seqPath), CertificateFile)
	if _, err := os.Stat(certPath); err != nil || filepath.Base(seqPath) != SeqFile {
		db, err := ReadSequencesFile(seqPath, SeqOptions{Size: size, Base: base})
		if err != nil {
			return nil, nil, true, err
		}
		return db.Sequences(), nil, true, nil
	}
	cert, err = ReadSynthesis(filepath.Dir(seqPath))
	if err != nil {
		return nil, nil, true, err
	}
	if !cert.SameSpace(g, size) {
		where := fmt.Sprintf("an alphabet of %d symbols", cert.Alphabet)
		if cert.Universe != nil {
			where = cert.Universe.String()
		}
		here := fmt.Sprintf("an alphabet of %d symbols", size)
		if g != nil {
			here = g.String()
		}
		return nil, nil, true, fmt.Errorf("%s: released on %s, not %s: %w", path, where, here, ErrOtherSpace)
	}
	return cert.Seqs, cert, true, nil
}

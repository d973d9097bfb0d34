package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			in, out, priorFile, secrets, certFile, origin, design, method, noiseOut string
			eps, lambda, radius, delta                                              float64
			listSecrets, force, pointsOnly, allowOverlap                            bool
			rf                                                                      readFlags
			led                                                                     ledgerFlags
			workers                                                                 int
			placesEvery                                                             bool
		)
		cmd := &cobra.Command{
			Use:   "sanitize --in TRACE --out TRACE --prior PRIOR.json --epsilon E --lambda L --radius METRES",
			Short: "Release traces with conditional inferential privacy, certified per person against a prior family",
			Long: `Sanitise the traces of a file so that, for every person (uid) and every secret,
a Gaussian-process adversary whose prior is any member of the family in
PRIOR.json (kernel, any lengthscale in its range, any mean) changes its
beliefs about the secret locations by at most epsilon in Rényi divergence of
order lambda, between any two hypotheses within radius METRES (conditional
inferential privacy, Meehan & Chaudhuri). All traces of one person are
designed for and certified jointly: the epsilon is per person.

` + cli.Wrap("What epsilon means, e.g. at --epsilon 1 --lambda 2 --radius 100: "+sanitize.MeaningOf(1, 2, 100).Text+
				". The certificate's meaning, and the text output, say it for the epsilon certified.", cli.HelpWidth) + `

The noise depends only on public inputs (timestamps, the prior, the secrets
and the target). By default (--design auto) it follows a spectral envelope of
the prior family (docs/robust-cip.md), with epsilon a proven upper bound over
the family; for a prior with a single lengthscale it is proportional to the
prior (exact), or the least-noise (E3) design for listed secrets. It is drawn
exactly from crypto/rand (unless --seed) and rounded to a 1 mm grid, so that
no output depends on the input's low-order bits. --method linear (the default
whenever the noise has a state-space form) samples it in time and memory
linear in the points, by a Kalman-type recursion; --method dense through a
Cholesky factor (O(n^3); the exact proportional and e3 designs).

--secrets all (default): every point is a basic secret. Otherwise a
comma-separated list of times (RFC 3339, or Unix seconds), ";" joining the
times of one compound secret (quote it in the shell), or a file with one
secret per line in the same syntax (# comments). Every time must be a
timestamp of the trace.

The noise is added to each point's Earth-centred coordinates (x, y, z) and
the noisy point is projected back to the surface: no origin or plane, so a
person who travels across a country is released in one run like one who
stays in a city, and nothing about where they are chooses a parameter.
--origin (or the prior file's) is only recorded for maps and attacks.

A trace that shares even one fix with the prior's fitting corpus (cut, split,
renamed, moved or converted) is refused, by the private index tracepriv fit
wrote beside the prior (PRIOR.corpus.private.json; without it the certificate
says the check could not be made); --allow-prior-overlap releases it with
none of that person's classes covered (docs/fit.md).

Writes the sanitised traces in the input format (timestamps kept; altitude and
attributes dropped) and a JSON certificate (--certificate, default
OUT.cert.json) together or not at all. --noise-out also writes the
per-dimension noise covariance actually used, as a CSV matrix over the input's
points in file order (one person, at most 5,000 points).

Who a person is (docs/input.md): an input is ONE person unless it is declared
a corpus. --in DIR is one person: every trace file under DIR, at any depth, is
theirs (uid --uid, else GeoLife's <uid> for Data/<uid> or Data/<uid>/Trajectory,
else DIR's name). --in FILE is one person too, even a CSV or GeoJSON of several
uids (they are merged, with a warning). --corpus declares a corpus: each
immediate child folder of DIR is one person, with everything below it (GeoLife's
Data folder gives one person per <uid>), and a file directly in DIR, or a FILE,
is one person per value of its uid field; such a file without a uid field is
refused. Folders below a person never make a person. The persons, with their
files and points, are printed before anything is drawn.

With --in DIR, files are read leniently (malformed rows skipped and counted),
persons are released in parallel, and --out DIR mirrors the input: each file's
sanitised traces at the same relative path, one certificate per group of
people under certificates/, and manifest.json listing every person's uid,
points, epsilon_max and files. An interrupted run started again with the same
options resumes without redoing finished people.

A person's budget across releases: every private release is charged to each
person (by uid) in a ledger, by default the user configuration directory's
tracepriv/ledger.json (--ledger FILE names another; --no-ledger records
nothing and the certificate says ledger: off; a --seed run is not private
and not charged). Each person has one account, in one currency (Rényi
epsilon at the account's order within its radius) shared with their geoind
sessions; --budget B sets it once, and from then on a release that would
take anyone over it is refused before any noise is drawn, with the ledger
unchanged. A file is charged the target --epsilon immediately before it is
drawn and settled to each person's certified epsilon_max when its files are
written (a release that fails is not charged); a corpus does the same for
each group of people, so a run refused or failed charges only the people
whose files landed, and an interrupted run resumed with the same options
and --out settles what it left pending. See docs/ledger.md.`,
			Example: `  tracepriv demo --out demo-output
  tracepriv sanitize --in demo-output/sample.gpx --out sample.sanitised.gpx --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100
  tracepriv sanitize --in internal/sample/synth-1/commute.plt --out s.plt --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100 --noise-out sanitised-noise.csv --json
  tracepriv sanitize --in demo-output/sample.csv --out s.csv --prior internal/sample/prior.json --epsilon 2 --lambda 2 --radius 100 --secrets '2024-03-12T00:05:22Z'
  # stays certified against every Matérn member, also those shorter than the stay (more noise)
  tracepriv sanitize --in demo-output/sample.gpx --out every.gpx --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100 --places-every-length
  # one person's folder (every file below it is theirs), and a corpus (one person per child folder)
  tracepriv sanitize --in internal/sample/synth-1 --out released-1 --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100
  tracepriv sanitize --in internal/sample --corpus --out released --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100
  # a person's budget across releases: each run is charged in budget.json (default: the user configuration directory's), and refused past --budget
  tracepriv sanitize --in internal/sample/synth-1/commute.plt --out s2.plt --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100 --ledger budget.json --budget 3
  # your own prior, fitted on other people's traces: tracepriv fit --in CORPUS_DIR --out prior.json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				f := cmd.Flags()
				for _, req := range []string{"in", "out", "prior", "epsilon", "lambda", "radius"} {
					if !f.Changed(req) {
						return usageErrorf("sanitize: --%s is required", req)
					}
				}
				if f.Changed("delta") && !(delta > 0 && delta < 1) {
					return usageErrorf("sanitize: --delta %v: the prior-posterior gap needs a delta in (0, 1), e.g. 1e-5", delta)
				}
				lf, ledgerName, err := led.open(env, cmd, "sanitize")
				if err != nil {
					return err
				}
				if lf != nil {
					defer lf.Close()
				}
				charge := led.request(budget.CIP, "tracepriv sanitize", out)
				charge.Lambda, charge.RadiusM = lambda, radius
				if st, err := os.Stat(in); err == nil && st.IsDir() {
					return sanitizeCorpus(env, cmd, &rf, lf, ledgerName, charge, in, out, priorFile, origin, design, method, secrets, eps, lambda, radius, delta, workers, pointsOnly, allowOverlap, placesEvery)
				}
				var adm *budget.Admission
				var fileKey string
				if lf != nil {
					// The key names the output (a hash, never its path), so
					// that the next release to it can settle what a killed
					// one left pending.
					absOut, err := filepath.Abs(out)
					if err != nil {
						return err
					}
					fileKey = releaseKey("sanitize file", absOut)
					charge.Release = fileKey + " " + newNonce()
					adm = budget.NewAdmission(lf, charge)
				}
				ro, err := rf.options(in)
				if err != nil {
					return fmt.Errorf("sanitize: --in: %w", err)
				}
				inFmt := ro.Format
				if outFmt, err := trace.FormatFromPath(out); err == nil && outFmt != inFmt {
					return usageErrorf("sanitize: --out %s is %s but the input is %s; the sanitised trace keeps the input format", out, outFmt, inFmt)
				}
				if certFile == "" {
					certFile = sanitize.CertificatePath(out)
				}
				if err := checkOutputs([]string{in}, force, map[string]string{"--out": out, "--certificate": certFile, "--noise-out": noiseOut}); err != nil {
					return fmt.Errorf("sanitize: %w", err)
				}
				pr, pc, err := sanitize.ReadPrior(priorFile)
				if err != nil {
					return fmt.Errorf("sanitize: --prior: %w", err)
				}
				spec, err := parseSecretTimes(secrets)
				if err != nil {
					return fmt.Errorf("sanitize: --secrets: %w", err)
				}
				opt := sanitize.Options{Prior: pr, Epsilon: eps, Lambda: lambda, Radius: radius, Secrets: spec, Delta: delta,
					Design: cip.Method(design), Path: sanitize.Path(method), ListSecrets: listSecrets, Source: env.Source(), PointsOnly: pointsOnly, AllowPriorOverlap: allowOverlap, PriorCorpus: pc, Ledger: ledgerName}
				opt.PlacesEveryLength = placesEvery
				if origin != "" {
					p, err := geo.ParseLatLon(origin)
					if err != nil {
						return fmt.Errorf("sanitize: --origin: %w", err)
					}
					opt.Origin = &p
				}
				// Options that cannot give a release are reported by their
				// flag before the ledger is consulted.
				if err := opt.Check(); err != nil {
					return fmt.Errorf("sanitize: %w", flagError(err))
				}
				if err := settleLeftovers(lf, fileKey, out, certFile); err != nil {
					return ledgerError("sanitize", err)
				}
				// A CSV file is streamed (two passes, one chunk in memory)
				// when its people's rows are contiguous.
				if inFmt == trace.CSV && spec == nil && noiseOut == "" {
					done, err := sanitizeStream(env, ro, in, out, certFile, opt, adm)
					if done || err != nil {
						return err
					}
				}
				traces, rep, err := rf.read(in)
				if err != nil {
					return fmt.Errorf("sanitize: %w", err)
				}
				if len(traces) == 0 {
					return fmt.Errorf("sanitize: %s: no trace", in)
				}
				reportSkipped(env, rep)
				reportPersons(env, filePersons(traces))
				// The admission policy (budget.Admission): refuse before
				// any noise is drawn, charge the target (the certified
				// epsilon of each person is at most it) immediately
				// before drawing, settle when the files landed, undo when
				// they did not.
				target := map[string]float64{}
				if adm != nil {
					uids, err := uidsOf(traces)
					if err != nil {
						return fmt.Errorf("sanitize: --ledger: %s: %w", in, err)
					}
					for _, u := range uids {
						target[u] = eps
					}
				}
				if err := adm.Check(target); err != nil {
					return ledgerError("sanitize", err)
				}
				if err := adm.Charge("", target); err != nil {
					return ledgerError("sanitize", err)
				}
				bar := env.Progress(4, "sanitize")
				opt.Progress = func(string) { bar.Add(1) }
				outs, cert, err := sanitize.Release(traces, opt)
				bar.Finish()
				if err != nil {
					return fmt.Errorf("%s: %w%s", in, flagError(err), undoCharge(adm))
				}
				cert.RecordInput(rep)
				files := sanitize.Files{Traces: out, Format: inFmt, Certificate: certFile, NoiseCovariance: noiseOut}
				if err := files.Write(traces, outs, cert); err != nil {
					var pe *param.Error
					if errors.As(err, &pe) && pe.Name == "NoiseCovariance" {
						return usageErrorf("sanitize: --noise-out: %s%s", pe.Why, undoCharge(adm))
					}
					return fmt.Errorf("sanitize: nothing written: %w%s", err, undoCharge(adm))
				}
				if err := settleCertificate(env, adm, cert); err != nil {
					return err
				}
				return emitCertificate(env, cert, in, out, certFile)
			},
		}
		f := cmd.Flags()
		f.StringVar(&in, "in", "", "input trace file (CSV, GeoJSON, GPX or PLT)")
		f.StringVar(&out, "out", "", "output trace file, written in the input format")
		f.StringVar(&priorFile, "prior", "", "prior family file (tracepriv fit writes one)")
		f.Float64Var(&eps, "epsilon", 0, "target epsilon for every secret, per person")
		f.Float64Var(&lambda, "lambda", 0, "Rényi order lambda > 1")
		f.Float64Var(&radius, "radius", 0, "radius r in metres within which secret locations are indistinguishable")
		f.StringVar(&secrets, "secrets", "all", "all, a comma-separated list of times (; joins a compound secret), or a file of them")
		f.StringVar(&certFile, "certificate", "", "certificate file (default OUT.cert.json)")
		f.StringVar(&origin, "origin", "", "public reference point LAT,LON recorded for maps and attacks (default: the prior file's); the release does not use it")
		f.StringVar(&design, "design", string(sanitize.DesignAuto), "noise designer: auto, envelope, proportional or e3")
		f.StringVar(&method, "method", string(sanitize.PathAuto), "computation path: auto, dense (O(n^3), exact designs) or linear (O(n), state-space noise)")
		f.StringVar(&noiseOut, "noise-out", "", "write the per-dimension noise covariance (CSV matrix, input order; one person, <= 5,000 points)")
		f.Float64Var(&delta, "delta", sanitize.DefaultDelta, "delta of the prior-posterior gap stated in the certificate")
		rf.add(cmd)
		rf.addCorpus(f, "with --in DIR, --out DIR mirrors it")
		led.add(f)
		f.BoolVar(&listSecrets, "list-secrets", false, "list every secret in the certificate (listed secrets always are)")
		f.BoolVar(&force, "force", false, "replace existing output files")
		f.BoolVar(&placesEvery, "places-every-length", false, "certify places against every Matérn member of the family, also those shorter than the stay (more noise; docs/robust-cip.md section 5)")
		f.BoolVar(&pointsOnly, "points-only", false, "protect the points (or listed secrets) alone, not places and the route (the certificate says they are not covered)")
		f.BoolVar(&allowOverlap, "allow-prior-overlap", false, "release even when the prior was fitted on data of the input (a fix shared with the prior's corpus index, PRIOR.corpus.private.json; the certificate then says those persons' classes are not covered)")
		f.IntVar(&workers, "workers", 0, "people released in parallel with --in DIR (default: all cores)")
		return cmd
	})
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

// emitCertificate prints a release's certificate (--json) or its summary;
// in is the one input file.
func emitCertificate(env *cli.Env, cert *sanitize.Certificate, in, out, certFile string) error {
	o := certificateOutput{Certificate: cert, Persons: make([]personOutput, len(cert.Persons))}
	for i, p := range cert.Persons {
		o.Persons[i] = personOutput{PersonCertificate: p, Files: []string{filepath.Base(in)}}
	}
	return env.Emit(o, func(w io.Writer) error {
		fmt.Fprintf(w, "prior family: %v; noise in %s coordinates (no origin); design %s, method %s\n", cert.PriorFamily, cert.Coordinates, cert.Design, cert.Path)
		for _, c := range cert.Persons {
			fmt.Fprintf(w, "person %q: %d points in %d traces, %d secrets\n", c.UID, c.Points, len(c.Traces), c.Secrets.Count)
			if c.SecretClasses.Points.Covered {
				fmt.Fprintf(w, "  certified epsilon %.4g (%s; target %.4g) at lambda %g, r = %g m\n",
					c.EpsilonMax, strings.ReplaceAll(c.EpsilonKind, "_", " "), cert.EpsilonTarget, cert.Lambda, cert.RadiusM)
				fmt.Fprintf(w, "  what it means: %s\n", sanitize.MeaningOf(c.EpsilonMax, cert.Lambda, cert.RadiusM).Text)
				fmt.Fprintf(w, "  %s\n", sanitize.GapMeaning(c.GapMax, cert.Delta))
				fmt.Fprintf(w, "  against %s\n", cert.FamilyLine())
			} else {
				fmt.Fprintf(w, "  NO GUARANTEE: no epsilon is certified (target %.4g at lambda %g, r = %g m)\n", cert.EpsilonTarget, cert.Lambda, cert.RadiusM)
			}
			for _, cl := range []struct {
				name string
				c    sanitize.ClassCertificate
			}{{"points", c.SecretClasses.Points}, {"places", c.SecretClasses.Places}, {"route", c.SecretClasses.Route}} {
				if cl.c.Covered {
					fmt.Fprintf(w, "  %s: epsilon %.4g; best guess between two places %g m apart %.1f %%\n", cl.name, cl.c.Epsilon, cert.RadiusM, 100*cl.c.Meaning.BestGuessAccuracy)
					if sm := cl.c.ShorterMembers; sm != nil {
						fmt.Fprintf(w, "    stays longer than the member's lengthscale: epsilon up to %.4g (upper bound; --places-every-length covers them)\n", sm.Epsilon)
					}
				} else {
					fmt.Fprintf(w, "  %s: NOT COVERED: %s\n", cl.name, cl.c.NotCovered)
				}
			}
			fmt.Fprintf(w, "  noise: %.4g m^2 per dimension, RMS displacement %.1f m (%.2fx one known prior)\n", c.NoiseBudgetM2, c.RMSNoiseM, c.RMSOverSingle)
			fmt.Fprintf(w, "  why: %s\n", c.Explanation)
		}
		if e := cert.EdgeSummary(); e != "" {
			fmt.Fprintf(w, "outside the family: %s\n", e)
		}
		if cert.SkippedRows > 0 {
			fmt.Fprintf(w, "skipped or merged %d input rows\n", cert.SkippedRows)
		}
		if cert.PriorCoverage != sanitize.PriorIndependent {
			fmt.Fprintf(w, "prior independence: %s\n", cert.PriorCoverage)
		}
		if !cert.Private {
			fmt.Fprintln(w, "NOT PRIVATE: the noise came from a seeded source; anyone with the seed can remove it")
		}
		_, err := fmt.Fprintf(w, "randomness %s; %.2f s; wrote %s and %s\n", cert.Randomness, cert.Seconds, out, certFile)
		return err
	})
}

// streamChunk is the points a streamed release holds at once.
const streamChunk = 1 << 16

// sanitizeStream releases a CSV file in two passes without holding it
// (sanitize.NewStream). It reports done false, with no error, when the file
// cannot be streamed (the caller then reads it into memory).
func sanitizeStream(env *cli.Env, ro trace.ReadOptions, in, out, certFile string, opt sanitize.Options, adm *budget.Admission) (bool, error) {
	ro.Chunk = streamChunk
	var open []io.Closer
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	reader := func() (trace.Reader, error) {
		f, err := infile.Open(in)
		if err != nil {
			return nil, err
		}
		open = append(open, f)
		o := ro
		o.Name = in
		return trace.NewReader(f, trace.CSV, o)
	}
	// The person rule over the streamed file (trace.Persons.Stream).
	persons, err := (trace.PersonRule{Corpus: ro.Corpus, UID: ro.UID}).Of(in)
	if err != nil {
		return true, fmt.Errorf("sanitize: --in: %w", err)
	}
	ro.UID = ""
	reader, merged, err := persons.Stream(in, reader)
	if err != nil {
		return true, fmt.Errorf("sanitize: --in: %w", err)
	}
	s, cert, err := sanitize.NewStream(reader, opt)
	if errors.Is(err, sanitize.ErrNotStreamable) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("%s: %w", in, flagError(err))
	}
	reportSkipped(env, s.Report())
	if !env.Quiet {
		writeMerged(env.Stderr, merged)
	}
	var counts []trace.PersonCount
	for _, p := range cert.Persons {
		counts = append(counts, trace.PersonCount{UID: p.UID, Files: 1, Points: p.Points})
	}
	reportPersons(env, counts)
	// The stream's certificate comes before any noise is drawn
	// (WriteStream draws): charge it, pending until the files land.
	if adm != nil {
		certified, err := certifiedEpsilons(cert)
		if err != nil {
			return true, err
		}
		if err := adm.Charge("", certified); err != nil {
			return true, ledgerError("sanitize", err)
		}
	}
	files := sanitize.Files{Traces: out, Format: trace.CSV, Certificate: certFile}
	if err := files.WriteStream(s, cert); err != nil {
		return true, fmt.Errorf("sanitize: nothing written: %w%s", err, undoCharge(adm))
	}
	if err := settleCertificate(env, adm, cert); err != nil {
		return true, err
	}
	return true, emitCertificate(env, cert, in, out, certFile)
}

// sanitizeCorpus is sanitize --in DIR --out DIR.
func sanitizeCorpus(env *cli.Env, cmd *cobra.Command, rf *readFlags, lf *budget.File, ledgerName string, charge budget.Request, in, out, priorFile, origin, design, method, secrets string, eps, lambda, radius, delta float64, workers int, pointsOnly, allowOverlap, placesEvery bool) error {
	if secrets != "all" {
		return usageErrorf("sanitize: --secrets: a corpus release protects every point (--secrets all)")
	}
	for _, f := range []string{"noise-out", "certificate"} {
		if cmd.Flags().Changed(f) {
			return usageErrorf("sanitize: --%s is for one file; a corpus release writes its certificates under --out/%s", f, sanitize.CertificatesDir)
		}
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return usageErrorf("sanitize: --out %s is a file; with --in DIR give an output directory", out)
	}
	pr, pc, err := sanitize.ReadPrior(priorFile)
	if err != nil {
		return fmt.Errorf("sanitize: --prior: %w", err)
	}
	ro, err := rf.base()
	if err != nil {
		return fmt.Errorf("sanitize: %w", err)
	}
	// The person rule (trace.PersonRule): DIR is one person unless
	// --corpus; a person's subfolders are theirs.
	ro.Root = in
	opt := sanitize.CorpusOptions{In: in, Out: out, Workers: workers, Read: ro, OnePerson: !ro.Corpus,
		Options: sanitize.Options{Prior: pr, Epsilon: eps, Lambda: lambda, Radius: radius, Delta: delta, Design: cip.Method(design), Path: sanitize.Path(method), Source: env.Source(),
			PointsOnly: pointsOnly, AllowPriorOverlap: allowOverlap, PriorCorpus: pc, Ledger: ledgerName}}
	opt.Options.PlacesEveryLength = placesEvery
	if origin != "" {
		p, err := geo.ParseLatLon(origin)
		if err != nil {
			return fmt.Errorf("sanitize: --origin: %w", err)
		}
		opt.Origin = &p
	}
	var tick *cli.Ticker
	opt.Progress = func(done, total, pts, totalPts int) {
		if tick == nil {
			tick = env.Ticker(total, "sanitize")
		}
		tick.Set(done, fmt.Sprintf("groups of people, %d of %d points", pts, totalPts))
	}
	// Who the persons are, before anything is charged or drawn.
	persons, merged, err := sanitize.CorpusPersons(opt)
	if err != nil {
		return fmt.Errorf("sanitize: --in: %w", flagError(err))
	}
	if !env.Quiet {
		writeMerged(env.Stderr, merged)
	}
	reportPersons(env, persons)
	hintCorpus(env, rf, in)
	if lf != nil {
		// Each group of people is checked before anything is drawn,
		// charged immediately before it is drawn, and settled when its
		// files land (budget.Admission, in the corpus engine); the key
		// ties a resumed run to the charges an interrupted one left.
		absOut, err := filepath.Abs(out)
		if err != nil {
			return err
		}
		prior, err := infile.ReadFile(priorFile)
		if err != nil {
			return fmt.Errorf("sanitize: --prior: %w", err)
		}
		// The origin is not in the key: the release does not depend on it.
		charge.Release = releaseKey("sanitize corpus", absOut, string(prior), string(opt.Design), string(opt.Path), noise.Describe(opt.Source),
			fmt.Sprint(opt.Epsilon, opt.Lambda, opt.Radius, opt.Delta))
		opt.Admission = budget.NewAdmission(lf, charge)
	}
	m, err := sanitize.Corpus(opt)
	if err != nil && m == nil {
		var re *budget.RefusedError
		if errors.As(err, &re) {
			return ledgerError("sanitize", err)
		}
		return fmt.Errorf("sanitize: %w (nothing was charged for people whose files were not written)", flagError(err))
	}
	if err == nil && lf != nil && !env.Quiet {
		for _, p := range m.Persons {
			charge.Epsilon[p.UID] = p.EpsilonMax
		}
		reportCharge(env, lf, charge)
	}
	emitErr := env.Emit(m, func(w io.Writer) error {
		fmt.Fprintf(w, "%d people, %d points from %d files", len(m.Persons), m.Points, m.Files)
		if len(m.Ignored) > 0 {
			fmt.Fprintf(w, " (%d other files ignored)", len(m.Ignored))
		}
		fmt.Fprintf(w, "; skipped or merged %d input rows\n", m.SkippedRows)
		fmt.Fprintf(w, "certified epsilon at most %.4g per person (target %.4g) at lambda %g, r = %g m; randomness %s; ledger %s\n", m.EpsilonMax, m.EpsilonTarget, m.Lambda, m.RadiusM, m.Randomness, m.Ledger)
		if len(m.Persons) > 0 {
			fmt.Fprintf(w, "what it means, for everyone: %s\n", sanitize.MeaningOf(m.EpsilonMax, m.Lambda, m.RadiusM).Text)
		}
		if m.Resumed > 0 {
			fmt.Fprintf(w, "resumed: %d groups of people were already released by an earlier run\n", m.Resumed)
		}
		for _, f := range m.Failed {
			fmt.Fprintf(w, "failed: %s: %s\n", strings.Join(f.Files, ", "), f.Error)
		}
		_, err := fmt.Fprintf(w, "wrote %s/%s in %.1f s\n", out, sanitize.ManifestName, m.Seconds)
		return err
	})
	if err != nil {
		return fmt.Errorf("sanitize: %w", err)
	}
	if emitErr != nil {
		return emitErr
	}
	if len(m.Failed) > 0 {
		hint := ""
		if opt.OnePerson {
			hint = fmt.Sprintf("\n(--in %s is one person; if its files are different people's, give --corpus: docs/input.md)", in)
		}
		return fmt.Errorf("sanitize: %d files or groups of people could not be released (listed in %s/%s; people whose files did not land were not charged); the rest was%s", len(m.Failed), out, sanitize.ManifestName, hint)
	}
	return nil
}

// filePersons counts the persons of traces read from one file.
func filePersons(traces []*trace.Trace) []trace.PersonCount {
	var out []trace.PersonCount
	for _, t := range traces {
		i := slices.IndexFunc(out, func(p trace.PersonCount) bool { return p.UID == t.UID })
		if i < 0 {
			out = append(out, trace.PersonCount{UID: t.UID, Files: 1})
			i = len(out) - 1
		}
		out[i].Points += t.Len()
	}
	slices.SortFunc(out, func(a, b trace.PersonCount) int { return strings.Compare(a.UID, b.UID) })
	return out
}

// flagError rewrites a param.Error to name the command-line flag.
func flagError(err error) error {
	if fe, ok := param.AsFlag(err, nil); ok {
		return &cli.FlagError{Err: fe}
	}
	return err
}

// parseSecretTimes reads --secrets: "all" (nil), a list, or a file, in
// the syntax of sanitize.ParseSecretTimes.
func parseSecretTimes(v string) ([][]time.Time, error) {
	if v == "all" {
		return nil, nil
	}
	st, statErr := os.Stat(v)
	if statErr != nil && (strings.ContainsAny(v, `/\`) || filepath.Ext(v) != "" && !strings.ContainsAny(filepath.Ext(v), "0123456789")) {
		// It names a file (a path or an extension, not a time's fraction).
		return nil, fmt.Errorf("%s: %w (give a file of secrets, a list of times, or all)", v, statErr)
	}
	if statErr == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give a file of secrets, a list of times, or all", v)
	}
	if statErr != nil {
		return sanitize.ParseSecretTimes(v)
	}
	fh, err := infile.Open(v)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return sanitize.ReadSecretTimes(fh, v)
}

// certifiedEpsilons is each person's certified epsilon_max in cert.
func certifiedEpsilons(cert *sanitize.Certificate) (map[string]float64, error) {
	eps := map[string]float64{}
	for _, p := range cert.Persons {
		if p.UID == "" {
			return nil, usageErrorf("sanitize: --ledger: a trace has no uid, and the ledger is kept per person: give --uid")
		}
		eps[p.UID] = p.EpsilonMax
	}
	return eps, nil
}

// settleCertificate settles the pending charge of a release that has
// landed to each person's certified epsilon_max, and reports it.
func settleCertificate(env *cli.Env, adm *budget.Admission, cert *sanitize.Certificate) error {
	if adm == nil {
		return nil
	}
	eps, err := certifiedEpsilons(cert)
	if err != nil {
		return err
	}
	if err := adm.Settle("", eps); err != nil {
		return fmt.Errorf("sanitize: the release was written, but settling its charge to the certified epsilons failed (it stays at the target, an upper bound): %w", err)
	}
	req := budget.Request{Mechanism: budget.CIP, Epsilon: eps}
	reportCharge(env, adm.File(), req)
	return nil
}

// undoCharge removes the pending charge of a release that did not land,
// and says so for the error message.
func undoCharge(adm *budget.Admission) string {
	if adm == nil {
		return ""
	}
	if err := adm.Undo(""); err != nil {
		return fmt.Sprintf(" (its charge stays in the ledger %s, as pending: undoing it failed: %v)", adm.File().Path(), err)
	}
	return fmt.Sprintf(" (nothing was released, so nothing is charged in the ledger %s)", adm.File().Path())
}

// settleLeftovers resolves the charges that an earlier release to the same
// output (key) left pending when it was killed between its charge and its
// settlement: if the output, its certificate or a temporary file of either
// is there, something may have landed and the charge is kept, settled to
// the certificate's epsilons if the certificate reads and is within the
// charge, else at its upper bound; if none is there, nothing of it landed
// and the charge is removed. In doubt the charge is kept.
func settleLeftovers(lf *budget.File, key, out, certFile string) error {
	if lf == nil || key == "" {
		return nil
	}
	for _, rel := range lf.Ledger().PendingReleases(key + " ") {
		landed := false
		for _, p := range []string{out, certFile} {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				landed = true
			}
			dir, base := filepath.Split(p)
			if m, err := filepath.Glob(filepath.Join(dir, "."+base+".tmp-*")); err != nil || len(m) > 0 {
				landed = true
			}
		}
		if !landed {
			if err := lf.Undo(rel); err != nil {
				return err
			}
			continue
		}
		var eps map[string]float64
		if fh, err := os.Open(certFile); err == nil {
			if cert, err := sanitize.ReadCertificate(fh); err == nil {
				eps, _ = certifiedEpsilons(cert)
			}
			fh.Close()
		}
		if err := lf.Settle(rel, eps); err != nil {
			if err := lf.Settle(rel, nil); err != nil { // a certificate above the charge is not this release's
				return err
			}
		}
	}
	return nil
}

// Command gen writes tracepriv's bundled synthetic sample corpus (package
// internal/sample/synth) as PLT files, one directory per made-up person:
//
//	go generate ./internal/sample                    # from the repository root
//	go run ./internal/sample/gen -out internal/sample
//
// It reads the prior family from OUT/prior.json and draws with the fixed
// seed synth.Seed, so it rewrites the committed files byte for byte: a
// seeded synthetic data generation, not a release of anyone's data.
//
// With -index GEOLIFE it instead builds the bundled prior's private corpus
// index from the GeoLife users the prior was fitted on (GEOLIFE/001 to
// 007), read as "tracepriv fit" reads them, and writes it beside the prior
// (OUT/prior.corpus.private.json, which is not committed: docs/datasets.md).
// A version 3 prior is first converted to version 4: its whole-trace
// fingerprints, checked against the traces read, are removed.
//
//	go run ./internal/sample/gen -out internal/sample -index ../shared/data/geolife
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/sample/synth"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

func main() {
	out := flag.String("out", ".", "the sample directory: reads its prior.json, writes PERSON/NAME.plt under it")
	seed := flag.Uint64("seed", synth.Seed, "the seed (the committed sample uses the default)")
	index := flag.String("index", "", "a GeoLife directory with the users prior.json was fitted on: write the prior's private corpus index beside it instead of the corpus")
	flag.Parse()
	run := run
	if *index != "" {
		run = func(out string, _ uint64) error { return writeIndex(out, *index) }
	}
	if err := run(*out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string, seed uint64) error {
	pr, err := prior.ReadFile(filepath.Join(out, "prior.json"))
	if err != nil {
		return fmt.Errorf("%w (give -out the sample directory, e.g. internal/sample)", err)
	}
	files, err := synth.Generate(pr, seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seeded synthetic data (seed %d), not a release of anyone's data\n", seed)
	for _, f := range files {
		path := filepath.Join(out, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := trace.WriteFile(path, []*trace.Trace{f.Trace}, trace.PLT); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s: %d points over %s\n", path, f.Trace.Len(), f.Trace.Duration())
	}
	return nil
}

// writeIndex writes OUT/prior.corpus.private.json from the GeoLife users
// under geolife, converting OUT/prior.json to version 4 first if needed.
func writeIndex(out, geolife string) error {
	path := filepath.Join(out, "prior.json")
	pr, err := prior.ReadFile(path)
	if err != nil {
		return err
	}
	if pr.Fit == nil || pr.Fit.Corpus == "" {
		return fmt.Errorf("%s records no fitting corpus", path)
	}
	var paths []string
	for _, u := range strings.Split(pr.Fit.Corpus, ", ") {
		paths = append(paths, filepath.Join(geolife, u))
	}
	var traces []*trace.Trace
	if _, _, err := trace.ReadPaths(paths, trace.ReadOptions{}, func(_ string, ts []*trace.Trace) { traces = append(traces, ts...) }); err != nil {
		return err
	}
	x := trace.CorpusIndexOf(traces...)
	if pr.Version < 4 {
		// The traces read must be those fitted: the same fingerprints.
		if got := fingerprints(traces); !slices.Equal(got, pr.Fit.Fingerprints) {
			return fmt.Errorf("the users %s under %s have %d fingerprints, not the %d of %s: not the corpus it was fitted on", pr.Fit.Corpus, geolife, len(got), len(pr.Fit.Fingerprints), path)
		}
		pr.Version, pr.Fit.Fingerprints, pr.Fit.CorpusIndexed = prior.Version, nil, true
		if err := atomicfile.Write(path, 0o644, pr.Write); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "converted %s to version %d\n", path, prior.Version)
	}
	if x.Prior, err = pr.Digest(); err != nil {
		return err
	}
	ip := prior.CorpusIndexPath(path)
	if err := atomicfile.Write(ip, 0o600, x.Write); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d fixes of %d persons (private: not committed)\n", ip, x.Fixes, len(x.Persons))
	return nil
}

// fingerprints returns the sorted, distinct fingerprints of the traces and
// of their persons, as a prior of version 3 recorded them (version 4 records
// none: its overlap check uses trace.CorpusIndexOf).
func fingerprints(traces []*trace.Trace) []string {
	set := map[string]bool{}
	for _, t := range traces {
		set[trace.Fingerprint(t)] = true
		if p := trace.PersonFingerprint(t.UID); p != "" {
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

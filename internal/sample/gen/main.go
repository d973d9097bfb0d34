// Command gen writes tracepriv's bundled synthetic sample corpus (package
// internal/sample/synth) as PLT files, one directory per made-up person:
//
//	go generate ./internal/sample                    # from the repository root
//	go run ./internal/sample/gen -out internal/sample
//
// It reads the prior family from OUT/prior.json and draws with the fixed
// seed synth.Seed, so it rewrites the committed files byte for byte: a
// seeded synthetic data generation, not a release of anyone's data.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample/synth"
	"github.com/tracepriv/tracepriv/trace"
)

func main() {
	out := flag.String("out", ".", "the sample directory: reads its prior.json, writes PERSON/NAME.plt under it")
	seed := flag.Uint64("seed", synth.Seed, "the seed (the committed sample uses the default)")
	flag.Parse()
	if err := run(*out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string, seed uint64) error {
	prior, err := gp.ReadPriorFile(filepath.Join(out, "prior.json"))
	if err != nil {
		return fmt.Errorf("%w (give -out the sample directory, e.g. internal/sample)", err)
	}
	files, err := synth.Generate(prior, seed)
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

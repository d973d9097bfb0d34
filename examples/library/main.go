// Command tracepriv-library shows tracepriv used as a library from another module: it
// releases a trace with conditional inferential privacy and writes the released trace and
// its certificate together (sanitize.Files, the format from the output's name).
//
//	go run . [-in TRACE] OUT.csv
//
// Without -in it releases the bundled synthetic sample (package sample) against the bundled
// prior family. See README.md, "Using the library from another module".
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

func main() {
	log.SetFlags(0)
	in := flag.String("in", "", "trace file to release (PLT, CSV, GeoJSON or GPX); default: the bundled sample")
	priorFile := flag.String("prior", "", "prior family (tracepriv fit's prior.json); default: the bundled one")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: tracepriv-library [-in TRACE] [-prior PRIOR.json] OUT.csv (or .gpx, .geojson, .plt)")
	}
	out := flag.Arg(0)

	var traces []*trace.Trace
	var err error
	if *in == "" {
		traces, err = sample.Traces()
		traces = traces[:1]
	} else {
		traces, _, err = trace.ReadFile(*in, trace.ReadOptions{})
	}
	if err != nil {
		log.Fatal(err)
	}
	var p *prior.Prior
	if *priorFile == "" {
		p, err = sample.Prior()
	} else {
		p, err = prior.ReadFile(*priorFile)
	}
	if err != nil {
		log.Fatal(err)
	}

	// The README's entry point: traces and a public prior family in, released traces and
	// the certificate (per person) out. Source nil: noise from crypto/rand.
	released, cert, err := sanitize.Release(traces, sanitize.Options{Prior: p, Epsilon: 1, Lambda: 2, Radius: 100})
	if err != nil {
		log.Fatal(err)
	}
	// Both files land, or neither does; the format comes from the name.
	files := sanitize.Files{Traces: out, Certificate: sanitize.CertificatePath(out)}
	if err := files.Write(traces, released, cert); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "released %d trace(s) to %s; certificate %s: epsilon %.3g (%s), best guess between two places 100 m apart %.1f %%\n",
		len(released), files.Traces, files.Certificate, cert.EpsilonMax, cert.EpsilonKind, 100*cert.Meaning.BestGuessAccuracy)
}

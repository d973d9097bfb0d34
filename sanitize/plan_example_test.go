package sanitize_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log"
	"strings"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
)

// Certify first, draw later: Prepare designs and certifies the release
// from the trace's public part (uid, name, timestamps), so its exact
// certificate can be charged in a budget ledger before anything is drawn;
// Draw then reads the coordinates and draws once from that design.
func ExamplePrepare() {
	traces, err := sample.Traces()
	if err != nil {
		log.Fatal(err)
	}
	in := traces[:1]
	prior, err := sample.Prior()
	if err != nil {
		log.Fatal(err)
	}
	opt := sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(1)}
	p, err := sanitize.Prepare(context.Background(), sanitize.PublicOf(in), opt)
	if err != nil {
		log.Fatal(err)
	}
	cert := p.Certificate()
	cert.Seconds = 0 // the time taken is not a function of the inputs
	var doc strings.Builder
	if err := sanitize.WriteCertificate(&doc, cert); err != nil {
		log.Fatal(err)
	}
	planned := sha256.Sum256([]byte(doc.String())) // what a charge names
	fmt.Printf("certified before the draw: epsilon %.3g for person %s\n", cert.EpsilonMax, cert.Persons[0].UID)

	outs, drawn, err := p.Draw(context.Background(), in)
	if err != nil {
		log.Fatal(err)
	}
	doc.Reset()
	if err := sanitize.WriteCertificate(&doc, drawn); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d points drawn under the planned certificate: %v\n", outs[0].Len(), sha256.Sum256([]byte(doc.String())) == planned)
	_, _, err = p.Draw(context.Background(), in)
	fmt.Println(err)
	// Output:
	// certified before the draw: epsilon 1 for person synth-1
	// 268 points drawn under the planned certificate: true
	// sanitize: this prepared release was already drawn; prepare it again for another release
}

package accountant

import (
	"fmt"
	"io"
)

// WriteText writes the report for people: the number of runs, the best
// bound, then each accountant's answer, one per line. The caller names
// the ledger before it ("releases.yaml: 16 mechanism runs").
func (r *Report) WriteText(w io.Writer) error {
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	p("%d mechanism runs\n", r.Runs)
	if r.Method != "" {
		if r.Query == "epsilon" {
			p("epsilon = %.10g at delta = %g (best: %s)\n", r.Epsilon, r.Delta, r.Method)
		} else {
			p("delta = %.10g at epsilon = %g (best: %s)\n", r.Delta, r.Epsilon, r.Method)
		}
	}
	if x := r.RDP; x != nil {
		p("  rdp:  epsilon = %.10g, delta = %.10g, optimal order %g\n", x.Epsilon, x.Delta, x.Order)
	}
	if z := r.ZCDP; z != nil {
		p("  zcdp: rho = %.10g, epsilon = %.10g, delta = %.10g\n", z.Rho, z.Epsilon, z.Delta)
	}
	if g := r.GDP; g != nil {
		p("  gdp:  mu = %.10g, epsilon = %.10g, delta = %.10g (exact)\n", g.Mu, g.Epsilon, g.Delta)
	}
	if a := r.Approx; a != nil {
		p("  (epsilon, delta) events, basic composition: epsilon = %g, delta = %g (included above)\n", a.Epsilon, a.Delta)
	}
	if m := r.Metric; m != nil {
		p("metric privacy (per unit distance, composed separately): %v\n", m)
	}
	return err
}

// WriteText writes the conversion as name = value lines.
func (r *GDPResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "mu = %g\nepsilon = %.10g\ndelta = %.10g\n", r.Mu, r.Epsilon, r.Delta)
	return err
}

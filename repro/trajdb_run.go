// "tracepriv repro trajdb" and "repro thesis --chapter 3" as calls
// (RunTrajDB, Chapter3) and their text reports.

package repro

import (
	"fmt"
	"io"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trajdb"
)

// TrajDBRunOptions are the settings of RunTrajDB.
type TrajDBRunOptions struct {
	// Utility are TrajDBUtility's options; RunTrajDB sets
	// Utility.Metrics.Universe to the universe of the database.
	Utility TrajDBUtilityOptions
	// Population, if positive, measures a synthetic population of that
	// many people with PopulationSeqs trajectories each, drawn from the
	// database's Markov chain (MarkovPopulation), instead of the
	// database: an evaluation device for inputs of a handful of people,
	// whose every count is smaller than the trees' noise.
	Population, PopulationSeqs int
	// Out is the directory WriteTrajDB writes to.
	Out string
}

// RunTrajDB measures the utility of the trajectory-database releases of
// db, a database over the universe g read as input says, and writes the
// report to opt.Out.
func RunTrajDB(db *trajdb.DB, g *trajdb.Grid, input *trajdb.MapReport, opt TrajDBRunOptions) (*TrajDBReport, error) {
	uopt := opt.Utility
	uopt.Metrics.Universe = g
	if uopt.Src == nil {
		uopt.Src = noise.Secure() // the population draws from it too
	}
	var population *Population
	if opt.Population > 0 {
		var err error
		if db, err = MarkovPopulation(db, opt.Population, opt.PopulationSeqs, noise.Derive(uopt.Src, "population")); err != nil {
			return nil, fmt.Errorf("population: %w", err)
		}
		population = &Population{Persons: opt.Population, SeqsPerPerson: opt.PopulationSeqs, Model: MarkovPopulationModel}
	}
	res, err := TrajDBUtility(db, uopt)
	if err != nil {
		return nil, err
	}
	o := &TrajDBReport{TrajDBUtilityResult: res, Universe: g, Input: input, Population: population}
	if err := WriteTrajDB(opt.Out, o); err != nil {
		return nil, err
	}
	return o, nil
}

// WriteText prints one row per mechanism and epsilon: each metric's mean
// beside the uniform release's, and whether the mechanism beats uniform.
func (o *TrajDBReport) WriteText(w io.Writer) error {
	res, b := o.TrajDBUtilityResult, o.Bounds
	fmt.Fprintf(w, "%s; %d persons, bounds %d cells x %d trajectories, %d reps, against %s\n", o.Universe, res.Persons, b.MaxLen, b.MaxSeqs, res.Reps, res.Against)
	fmt.Fprintf(w, "  %-7s %-4s  %-21s %-21s %-21s %-21s %-21s %-21s  %s\n", "mech", "eps", "query_are", "trip_jsd", "length_jsd", "diameter_jsd", "pattern_f1", "kendall_tau", "beats uniform")
	for _, r := range res.Rows {
		fmt.Fprintf(w, "  %-7s %-4g", r.Mechanism, r.Epsilon)
		for _, row := range MetricRows(r.Mean, r.Uniform) {
			fmt.Fprintf(w, "  %8.3f (uni %7.3f)", row.Values[0], row.Values[1])
		}
		verdict := "yes"
		if !r.BeatsUniform {
			verdict = "no: " + strings.Join(r.NotBetter, ", ")
		}
		fmt.Fprintf(w, "  %s\n", verdict)
	}
	fmt.Fprintf(w, "  non-private:")
	for _, row := range MetricRows(res.NonPrivate) {
		fmt.Fprintf(w, " %s %.3f", row.Name, row.Values[0])
	}
	_, err := fmt.Fprintf(w, "\nwrote %s\n", strings.Join(o.Files, ", "))
	return err
}

// WriteText prints the reproduction's findings, one sentence each, and
// the largest advantage the quasi-identifier attack measured.
func (o *Chapter3Report) WriteText(w io.Writer) error {
	for _, s := range o.Summary {
		fmt.Fprintln(w, s)
	}
	var adv []float64
	for _, r := range o.QIAttack {
		adv = append(adv, r.All.Advantage)
	}
	if len(adv) > 0 {
		fmt.Fprintf(w, "largest quasi-identifier attack advantage measured: %.3f\n", floats.Max(adv))
	}
	_, err := fmt.Fprintf(w, "wrote %v\n", o.Files)
	return err
}

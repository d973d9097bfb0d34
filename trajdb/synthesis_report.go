package trajdb

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracepriv/tracepriv/trace"
)

// SynthesisReport is what a synthesis released and read (tracepriv
// synthesize --json): the public certificate (CertificateFile) apart
// from what only the operator may see.
type SynthesisReport struct {
	Certificate *Certificate      `json:"certificate"`
	Operator    SynthesisOperator `json:"operator"`
	Files       []string          `json:"files"`
	// The rows skipped while reading, at the top level as every command
	// reports them; like Operator, not protected and not published.
	trace.InputSummary

	// Space names the universe (a grid or an alphabet) in the text;
	// Mechanism and Synthetic are the release's.
	Space     fmt.Stringer  `json:"-"`
	Mechanism MechanismName `json:"-"`
	Synthetic *Synthetic    `json:"-"`
}

// WriteText writes the report as tracepriv synthesize prints it.
func (o *SynthesisReport) WriteText(w io.Writer) error {
	rel, cert := o.Synthetic, o.Certificate
	if rep := o.Operator.Input; rep != nil {
		fmt.Fprintf(w, "read: %s\n", rep)
	} else {
		st := o.Operator.Sequences
		fmt.Fprintf(w, "read: %d sequences of %d persons over %s (%d kept, %d cut to --max-len)\n", st.Sequences, st.Persons, o.Space, st.Kept, st.Truncated)
	}
	how := ""
	if rel.Reconstruction != "" {
		how = ", reconstruction " + string(rel.Reconstruction)
	}
	fmt.Fprintf(w, "released %d trajectories with %s at epsilon %g%s (%d levels, %d noisy counts; the most expensive path spent %.6g); randomness %s\n",
		len(rel.Seqs), o.Mechanism, cert.EpsilonSpent, how, len(rel.Levels), rel.Nodes, rel.WorstPathEpsilon, cert.Randomness)
	for _, l := range rel.Levels {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "what it means: %s\n", Meaning(cert.EpsilonSpent))
	_, err := fmt.Fprintf(w, "wrote %s\n", strings.Join(o.Files, ", "))
	return err
}

// SynthesisOperator is what a synthesis read: counts of the input, not
// protected, never written beside the release.
type SynthesisOperator struct {
	Note string `json:"note"`
	// Input is the mapping of traces onto the grid; Sequences what a
	// symbolic file held.
	Input     *MapReport `json:"input,omitempty"`
	Sequences *SeqStats  `json:"sequences,omitempty"`
}

// OperatorNote is SynthesisOperator's note.
const OperatorNote = "counts of the input for the operator (with skipped_rows): not protected, not part of the release"

package trajdb

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type named string

func (n named) String() string { return string(n) }

// TestSynthesisReport: the text says what was read, released and what
// epsilon means; the JSON carries the certificate, the operator's counts
// and the files, and nothing of the in-memory release.
func TestSynthesisReport(t *testing.T) {
	syn := &Synthetic{Seqs: [][]int{{1}, {2}}, Nodes: 7, EpsilonSpent: 1}
	r := &SynthesisReport{
		Certificate: &Certificate{Synthetic: syn, Randomness: "seeded:1"},
		Operator:    SynthesisOperator{Note: OperatorNote, Sequences: &SeqStats{Sequences: 4, Persons: 2, Kept: 3, Truncated: 1}},
		Files:       []string{"a", "b"},
		Space:       named("an alphabet of 3 symbols"),
		Mechanism:   "prefix",
		Synthetic:   syn,
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"read: 4 sequences of 2 persons over an alphabet of 3 symbols (3 kept, 1 cut to --max-len)",
		"released 2 trajectories with prefix at epsilon 1", "7 noisy counts", "what it means: " + Meaning(1), "wrote a, b"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"certificate", "operator", "files"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, j)
		}
	}
	for _, k := range []string{"Space", "Mechanism", "Synthetic"} {
		if _, ok := m[k]; ok {
			t.Errorf("JSON has %q: %s", k, j)
		}
	}
}

package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trajdb"
)

// TestResultOutput: the command's text and JSON shapes of the results,
// which the results now print themselves: the sanitize text names the
// failures and the manifest written; fit's JSON keeps "report" (null
// without one) and "out"; synthesize's JSON has the certificate at the
// top level with the operator's counts and the output beside it.
func TestResultOutput(t *testing.T) {
	var b bytes.Buffer
	sr := &SanitizeResult{Output: "out", Manifest: &sanitize.Manifest{Files: 3, Points: 10, Ignored: []string{"x"},
		Failed: []sanitize.Failure{{Files: []string{"a.plt", "b.plt"}, Error: "bad row"}}}}
	if err := sr.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 people, 10 points from 3 files (1 other files ignored)", "failed: a.plt, b.plt: bad row", "wrote out/" + sanitize.ManifestName + " in "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("sanitize text lacks %q:\n%s", want, b.String())
		}
	}
	var m map[string]json.RawMessage
	j, err := json.Marshal(&FitResult{Output: "p.json", Unreadable: 2})
	if err != nil || json.Unmarshal(j, &m) != nil {
		t.Fatalf("fit JSON %s: %v", j, err)
	}
	if string(m["report"]) != "null" || string(m["out"]) != `"p.json"` || string(m["unreadable_files"]) != "2" {
		t.Errorf("fit JSON %s", j)
	}
	syn := &trajdb.Synthetic{EpsilonSpent: 1}
	j, err = json.Marshal(&SynthesizeResult{Cert: &SynthesisCert{Mechanism: "prefix", Synthetic: syn}, Output: "dir"})
	m = nil
	if err != nil || json.Unmarshal(j, &m) != nil {
		t.Fatalf("synthesize JSON %s: %v", j, err)
	}
	for _, k := range []string{"mechanism", "input", "bounded", "unreadable_files", "output"} {
		if _, ok := m[k]; !ok {
			t.Errorf("synthesize JSON lacks %q: %s", k, j)
		}
	}
}

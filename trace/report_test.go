package trace

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestReportSummary checks the --json block every command prints about
// its input: nil-safe, with the same keys either way, counts by reason.
func TestReportSummary(t *testing.T) {
	var none *Report
	b, err := json.Marshal(none.Summary())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"skipped_rows":0,"skipped_by_reason":{}}`; got != want {
		t.Fatalf("nil report: %s, want %s", got, want)
	}
	r := &Report{Skipped: 2, Deduplicated: 3, SkippedFiles: []FileError{{File: "a.plt", Err: errors.New("bad header")}}}
	s := r.Summary()
	if s.SkippedRows != 5 || s.SkippedByReason[ReasonDuplicate] != 3 || s.SkippedByReason[ReasonMalformed] != 2 {
		t.Fatalf("summary %+v", s)
	}
	b, err = json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	files, _ := back["skipped_files"].([]any)
	if back["skipped_rows"] != 5.0 || len(files) != 1 {
		t.Fatalf("json %s", b)
	}
}

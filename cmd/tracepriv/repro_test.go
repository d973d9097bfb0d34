package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/cli"
)

// TestReproTrajDBCLI checks "repro trajdb"'s wiring with one release per
// mechanism on a synthetic population of 20 (--population; its help's
// example of 200 is slow-listed in TestExamplesRun): the flags reach the
// library (bounds, reps, epsilons, population), the report and its figure
// are written, and the JSON keeps its keys.
func TestReproTrajDBCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := riskRunJSON(t, "repro", "trajdb", "--in", filepath.Join("..", "..", "internal", "sample"), "--cell-m", "10000",
		"--bbox", "39.75,116.15,40.10,116.60", "--max-len", "3", "--max-seqs", "1", "--reps", "1", "--epsilons", "1", "--population", "20", "--out", dir, "--seed", "1")
	if p, _ := v["population"].(map[string]any); p == nil || p["persons"] != 20.0 || v["persons"] != 20.0 {
		t.Errorf("--population 20: population %v, persons %v", v["population"], v["persons"])
	}
	for _, k := range []string{"version", "bounds", "persons", "against", "reps", "non_private", "rows", "randomness", "universe", "input", "files"} {
		if _, ok := v[k]; !ok {
			t.Errorf("--json has no %q", k)
		}
	}
	if b := v["bounds"].(map[string]any); b["max_len"] != 3.0 || b["max_seqs"] != 1.0 || v["reps"] != 1.0 || v["randomness"] != "seeded:1" {
		t.Errorf("flags did not reach the run: bounds %v, reps %v, randomness %v", b, v["reps"], v["randomness"])
	}
	rows := v["rows"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["epsilon"] != 1.0 {
		t.Errorf("rows %v: want prefix and n-gram at epsilon 1", rows)
	}
	for _, f := range []string{"results-trajdb.json", "trajdb-utility.svg", "trajdb-utility.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestReproFlagErrors: the repro commands' bad flags are flag errors
// (code invalid_flag under --json) that name the flag, found before
// anything is computed.
func TestReproFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"repro", "cip", "--figure", "2a", "--sensitivity"}, "not a misspecified-prior panel"},
		{[]string{"repro", "cip", "--figure", "2d", "--replot", "--out", ""}, "--replot needs --out"},
		{[]string{"repro", "cip", "--figure", "2a", "--adversary-nugget", "-1"}, "--adversary-nugget"},
		{[]string{"repro", "cip-compare", "--leff", "1,-2"}, "--leff"},
		{[]string{"repro", "trajdb", "--in", ".", "--cell-m", "1000", "--bbox", "39.75,116.15,40.10,116.60", "--epsilons", "0"}, "--epsilons"},
		{[]string{"repro", "thesis", "--example", "3.8"}, "3.8"},
	} {
		status, body, _ := runErrJSON(t, append(tc.args, "--json")...)
		if status != 1 || body.Error.Code != cli.CodeInvalidFlag || !strings.Contains(body.Error.Message, tc.says) {
			t.Errorf("%v: status %d, %+v; want invalid_flag saying %q", tc.args, status, body.Error, tc.says)
		}
	}
	// A prior that cannot be read is named before the comparison runs.
	missing := filepath.Join(t.TempDir(), "prior.json")
	if err := riskRunErr(t, "repro", "cip-compare", "--prior", missing, "--out", ""); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("--prior %s: %v", missing, err)
	}
}

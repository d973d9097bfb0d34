package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/trajdb"
)

const testBBox = "39.75,116.15,40.10,116.60"

// TestReleaseEvaluate releases the GeoLife corpus with both mechanisms and
// checks the release's files against its report, then evaluates it.
func TestReleaseEvaluate(t *testing.T) {
	users, _ := geolife(t)
	in := filepath.Dir(users[0])
	for _, mech := range []string{"prefix", "ngram"} {
		out := filepath.Join(t.TempDir(), "rel")
		v := runJSON(t, "release", "--in", in, "--out", out, "--mechanism", mech, "--epsilon", "1",
			"--cell-m", "5000", "--bbox", testBBox, "--max-len", "3", "--max-seqs", "2", "--seed", "3")
		if got := v["epsilon_spent"].(float64); math.Abs(got-1) > 1e-9 {
			t.Errorf("%s: epsilon_spent %v, want 1", mech, got)
		}
		sum := 0.0
		for _, l := range v["levels"].([]any) {
			sum += l.(map[string]any)["epsilon"].(float64)
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: levels spend %v, want 1", mech, sum)
		}
		// The sequence file holds exactly the trajectories reported, each
		// of at most --max-len cells of the 8x8 grid.
		f, err := os.Open(filepath.Join(out, trajdb.SeqFile))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			n++
			if k := len(strings.Fields(line)); k < 1 || k > 3 {
				t.Errorf("%s: sequence %q has %d cells, want 1 to 3", mech, line, k)
			}
		}
		f.Close()
		if want := int(v["trajectories"].(float64)); n != want {
			t.Errorf("%s: %d sequences in the file, %d reported", mech, n, want)
		}
		// release.json is public: it must not carry the input's counts.
		raw, err := os.ReadFile(filepath.Join(out, trajdb.CertificateFile))
		if err != nil {
			t.Fatal(err)
		}
		var cert map[string]any
		if err := json.Unmarshal(raw, &cert); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"input", "skipped_rows", "persons", "fixes"} {
			if _, ok := cert[k]; ok {
				t.Errorf("%s: release.json publishes %q, a count of the input", mech, k)
			}
		}
		if cert["randomness"] != "seeded:3" {
			t.Errorf("%s: a seeded release says randomness %v", mech, cert["randomness"])
		}
		// Again into the same directory needs --force.
		if _, _, err := run(t, "release", "--in", in, "--out", out, "--mechanism", mech, "--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s: a second release over the first: %v, want a --force error", mech, err)
		}
		e := runJSON(t, "evaluate", "--real", in, "--released", out, "--cell-m", "5000", "--bbox", testBBox, "--seed", "4",
			"--plot", filepath.Join(t.TempDir(), "m.svg"))
		for _, k := range []string{"query_are", "trip_jsd", "length_jsd", "diameter_jsd", "pattern_f1", "kendall_tau"} {
			x, ok := e[k].(float64)
			if !ok || math.IsNaN(x) {
				t.Errorf("%s: evaluate %s = %v", mech, k, e[k])
			}
		}
		if b := e["bounds"].(map[string]any); b["MaxLen"] != 3.0 || b["MaxSeqs"] != 2.0 {
			t.Errorf("%s: evaluate took bounds %v, want the release's (3, 2)", mech, b)
		}
		np := e["baselines"].(map[string]any)["non-private"].(map[string]any)
		if np["released_sequences"].(float64) > e["real_sequences"].(float64) {
			t.Errorf("%s: the bounded data has more sequences than the real", mech)
		}
		// A grid other than the release's is refused.
		if _, _, err := run(t, "evaluate", "--real", in, "--released", out, "--cell-m", "3000", "--bbox", testBBox); err == nil || !strings.Contains(err.Error(), "grid") {
			t.Errorf("%s: evaluate on another grid: %v, want a grid error", mech, err)
		}
	}
}

func TestReleaseRefuses(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "internal", "sample")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mechanism", "flawed-present-only", "--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox}, "not differentially private"},
		{[]string{"--mechanism", "prefix", "--epsilon", "1", "--cell-m", "5000"}, "bbox"},
		{[]string{"--mechanism", "prefix", "--epsilon", "1", "--cell-m", "5000", "--bbox", "40.1,116.15,39.75,116.6"}, "--bbox"},
		{[]string{"--mechanism", "prefix", "--epsilon", "0", "--cell-m", "5000", "--bbox", testBBox}, "--epsilon"},
		{[]string{"--mechanism", "prefix", "--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox, "--max-len", "0"}, "--max-len"},
		{[]string{"--mechanism", "lap", "--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox}, "prefix or ngram"},
	} {
		args := append([]string{"release", "--in", src, "--out", filepath.Join(dir, "o")}, tc.args...)
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
	// The release may not land inside its input.
	in := t.TempDir()
	b, err := os.ReadFile(filepath.Join(src, "geolife-000-20081024020959.plt"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(in, "000"), 0o755)
	os.WriteFile(filepath.Join(in, "000", "a.plt"), b, 0o644)
	if _, _, err := run(t, "release", "--in", in, "--out", filepath.Join(in, "out"), "--mechanism", "prefix", "--epsilon", "1", "--cell-m", "5000", "--bbox", testBBox); err == nil || !strings.Contains(err.Error(), "inside --in") {
		t.Errorf("release inside its input: %v", err)
	}
}

// TestAuditSupportCLI: the flawed control is flagged with a witness, the
// prefix tree is not, and the exit status is 0 either way.
func TestAuditSupportCLI(t *testing.T) {
	for _, tc := range []struct {
		mech      string
		violation bool
	}{{"flawed-present-only", true}, {"prefix", false}, {"ngram", false}} {
		stdout, stderr, err := run(t, "audit", "support", "--mechanism", tc.mech, "--draws", "60", "--neighbour-draws", "30",
			"--max-removals", "8", "--max-additions", "8", "--random-candidates", "4", "--seed", "2", "--json")
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.mech, err, stderr)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatal(err)
		}
		if v["violation"] != tc.violation {
			t.Errorf("%s: violation %v, want %v (%v)", tc.mech, v["violation"], tc.violation, v["verdict"])
		}
		if _, ok := v["witness"]; ok != tc.violation {
			t.Errorf("%s: witness present %v, want %v", tc.mech, ok, tc.violation)
		}
	}
}

func TestReproChapter3CLI(t *testing.T) {
	if testing.Short() {
		t.Skip("draws a few thousand releases")
	}
	out := t.TempDir()
	stdout, stderr, err := run(t, "repro", "thesis", "--chapter", "3", "--out", out, "--draws", "40", "--victims", "8", "--seed", "1", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results-ch3.json", "ch3-attack.svg", "ch3-prop3_5.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, r := range v["prop3_6"].([]any) {
		m := r.(map[string]any)
		if (m["mechanism"] == "flawed-present-only") != (m["violation"] == true) {
			t.Errorf("Prop. 3.6: %s violation %v", m["mechanism"], m["violation"])
		}
	}
}

// TestReleaseSymbolic releases a symbolic sequence file (the papers'
// click-stream format) and evaluates it on its alphabet.
func TestReleaseSymbolic(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "clicks.seq")
	var b strings.Builder
	b.WriteString("# 400 sessions over 6 pages, 1-based like MSNBC\n")
	for i := range 400 {
		switch i % 4 {
		case 0, 1:
			b.WriteString("1 2 3\n")
		case 2:
			b.WriteString("1 4\n")
		default:
			b.WriteString("5 6 5 2\n")
		}
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "rel")
	stdout, stderr, err := run(t, "release", "--in", in, "--alphabet", "6", "--base", "1", "--out", out, "--mechanism", "prefix",
		"--epsilon", "2", "--max-len", "4", "--max-seqs", "1", "--seed", "1", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v["alphabet"] != 6.0 || v["universe"] != nil {
		t.Errorf("symbolic release: alphabet %v universe %v", v["alphabet"], v["universe"])
	}
	if _, err := os.Stat(filepath.Join(out, trajdb.CSVFile)); err == nil {
		t.Error("a symbolic release wrote positions")
	}
	e := runJSON(t, "evaluate", "--real", in, "--alphabet", "6", "--base", "1", "--released", out, "--seed", "2")
	if e["diameter_jsd"] != nil {
		t.Errorf("symbols have no diameter, got %v", e["diameter_jsd"])
	}
	// 400 sequences with 3 patterns: at epsilon 2 the prefix tree keeps
	// them, and beats uniform on the pattern F1.
	uni := e["baselines"].(map[string]any)["uniform"].(map[string]any)
	if !(e["pattern_f1"].(float64) > uni["pattern_f1"].(float64)) {
		t.Errorf("pattern_f1 %v not above uniform %v", e["pattern_f1"], uni["pattern_f1"])
	}
	if _, _, err := run(t, "evaluate", "--real", in, "--alphabet", "7", "--base", "1", "--released", out); err == nil || !strings.Contains(err.Error(), "alphabet") {
		t.Errorf("evaluate on another alphabet: %v", err)
	}
}

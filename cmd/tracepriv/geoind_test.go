package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/sample"
)

func geoindRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func geoindJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, err := geoindRun(t, append(args, "--json", "-q")...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v: bad JSON %q: %v", args, out, err)
	}
}

func TestGeoindQuantileCLI(t *testing.T) {
	var v struct{ Radius, Mean float64 }
	geoindJSON(t, &v, "geoind", "quantile", "--epsilon", "0.01", "--p", "0.9")
	// notes/anchors.md §A.4: ε·r = 3.889720169867429 at 0.9.
	if math.Abs(v.Radius-388.9720169867429) > 1e-9 || v.Mean != 200 {
		t.Errorf("radius %v mean %v", v.Radius, v.Mean)
	}
	geoindJSON(t, &v, "geoind", "quantile", "--epsilon", "2", "--p", "0.5")
	if math.Abs(v.Radius-1.678346990016661/2) > 1e-12 {
		t.Errorf("median radius %v", v.Radius)
	}
	for _, bad := range [][]string{{"--epsilon", "0"}, {"--epsilon", "1", "--p", "1"}, {"--epsilon", "-1"}} {
		if _, err := geoindRun(t, append([]string{"geoind", "quantile"}, bad...)...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestGeoindQueryCLI(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "s.json")
	keys := filepath.Join(dir, "keys")
	q := func(lat, tm string, extra ...string) (geoind.Report, error) {
		var rep geoind.Report
		args := append([]string{"geoind", "query", "--state", state, "--key-dir", keys, "--lat", lat, "--lon", "116.32", "--time", tm, "--seed", "3", "--json", "-q"}, extra...)
		out, err := geoindRun(t, args...)
		if err == nil {
			err = json.Unmarshal([]byte(out), &rep)
		}
		return rep, err
	}
	r0, err := q("39.98", "2008-10-24T02:09:59Z", "--origin", "39.9,116.4")
	if err != nil {
		t.Fatal(err)
	}
	if r0.Step != 0 || !r0.Hard || math.Abs(r0.Lat-39.98) > 0.5 {
		t.Errorf("first report %+v", r0)
	}
	r1, err := q("39.9801", "1224814259") // Unix seconds, a minute later
	if err != nil {
		t.Fatal(err)
	}
	if r1.Step != 1 || !(r1.Spent > r0.Spent) {
		t.Errorf("second report %+v after %+v", r1, r0)
	}
	st, err := geoind.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != geoind.StateVersion || st.Seal == nil || st.Seal.Counter != 2 || len(st.Run) != 2 || st.Spent != r1.Spent || st.Config.Origin.Lat != 39.9 {
		t.Errorf("state %+v", st)
	}
	if _, err := q("39.98", "2008-10-24T02:12:00Z", "--rate", "0.5"); err == nil || !strings.Contains(err.Error(), "cannot be changed") {
		t.Errorf("reconfiguring an existing session: %v", err)
	}
	if _, err := q("39.98", "2008-10-24T02:00:00Z"); err == nil {
		t.Error("query back in time accepted")
	}
	// IM spending the whole budget on one query: the next one is refused.
	state = filepath.Join(dir, "im.json")
	if _, err := q("39.98", "2008-10-24T02:09:59Z", "--origin", "39.9,116.4", "--mechanism", "im", "--rate", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := q("39.98", "2008-10-24T02:10:59Z"); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("query on an exhausted budget: %v", err)
	}
	if _, err := geoindRun(t, "geoind", "query", "--state", state, "--lat", "99", "--lon", "0"); err == nil {
		t.Error("latitude 99 accepted")
	}
}

func TestGeoindSanitizeCLI(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, sample.Name)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	var v struct {
		People []struct {
			Points, Released int
			Spent, Budget    float64
		}
	}
	geoindJSON(t, &v, "geoind", "sanitize", "--in", in, "--out", out, "--origin", "39.9042,116.4074", "--mechanism", "im", "--rate", "0.1", "--allow-partial", "--seed", "4")
	if len(v.People) != 1 || v.People[0].Released != 10 || v.People[0].Points != samplePoints(t) || v.People[0].Spent > v.People[0].Budget {
		t.Errorf("IM at 10 %% per point: %+v", v.People)
	}
	geoindJSON(t, &v, "geoind", "sanitize", "--in", in, "--out", out, "--force", "--origin", "39.9042,116.4074", "--mechanism", "pm", "--manager", "fixed-utility", "--accuracy", "3000", "--allow-partial", "--seed", "4")
	if len(v.People) != 1 || v.People[0].Released <= 17 {
		t.Errorf("PM on the 23-minute sample trace should beat IM's 17 points: %+v", v.People)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

func TestReproPredictiveCLI(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, sample.Name), sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	var v map[string]json.RawMessage
	outDir := filepath.Join(dir, "out")
	geoindJSON(t, &v, "repro", "predictive", "--data", dir, "--samplings", "1", "--seed", "5", "--out", outDir)
	for _, key := range []string{"fixed_rate", "fixed_utility"} {
		var rows []map[string]json.RawMessage
		if err := json.Unmarshal(v[key], &rows); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if len(rows) != 11 {
			t.Fatalf("%s: %d rows, want 11", key, len(rows))
		}
		for _, m := range []string{"im", "pm", "pm_skip"} {
			var met map[string]float64
			if err := json.Unmarshal(rows[3][m], &met); err != nil {
				t.Fatalf("%s %s: %v", key, m, err)
			}
			for _, f := range []string{"mean_error_m", "alpha90_m", "rate", "points_covered"} {
				if _, ok := met[f]; !ok {
					t.Errorf("%s %s lacks %s", key, m, f)
				}
			}
		}
	}
	// The reproductions draw their figures through viz: the predictive
	// case study's three panels side by side in one image. A second run
	// into the same directory: the output directory may be reused.
	if _, _, err := run(t, "repro", "predictive", "--data", dir, "--samplings", "1", "--seed", "1", "--out", outDir, "-q"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outDir, "results.json")); err != nil {
		t.Error(err)
	}
	f, err := os.Open(filepath.Join(outDir, "fixed_rate.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width < 3*cfg.Height {
		t.Errorf("fixed_rate.png is %dx%d, want three panels side by side", cfg.Width, cfg.Height)
	}
	svg, err := os.ReadFile(filepath.Join(outDir, "fixed_utility.svg"))
	if err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("fixed_utility.svg: %v", err)
	}
	for _, want := range []string{"statistics", "error", "budget rate", "PM+skip α(0.9)"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("fixed_utility.svg lacks %q", want)
		}
	}
	if _, err := geoindRun(t, "repro", "predictive", "--data", t.TempDir()); err == nil {
		t.Error("empty data directory accepted")
	}
}

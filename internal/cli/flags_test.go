package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/trace"
)

// TestUniverseFlagsSpace: --alphabet and a grid exclude each other, a bad
// value names its flag as a command-line error, and the defaults map.
func TestUniverseFlagsSpace(t *testing.T) {
	var u UniverseFlags
	f := pflag.NewFlagSet("x", pflag.ContinueOnError)
	u.Add(f)
	if err := f.Parse([]string{"--alphabet", "5", "--cell-m", "100"}); err != nil {
		t.Fatal(err)
	}
	var fe *FlagError
	if _, err := u.Space(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "--alphabet") {
		t.Errorf("--alphabet with --cell-m: %v", err)
	}
	u.CellM = 0
	if s, err := u.Space(); err != nil || s.Grid != nil || s.Size != 5 || s.String() != "an alphabet of 5 symbols" {
		t.Errorf("alphabet: %+v, %v", s, err)
	}
	u = UniverseFlags{CellM: 500, BBox: "39.75,116.15,40.10,116.60", MaxLen: 1, MaxSeqs: 1, MinLen: 1, MaxGap: time.Minute}
	if s, err := u.Space(); err != nil || s.Grid == nil || s.Size != s.Grid.Size() {
		t.Errorf("grid: %+v, %v", s, err)
	}
	u.MaxGap = 0
	if _, err := u.MapOptions(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "--max-gap 0") {
		t.Errorf("--max-gap 0: %v", err)
	}
	u.MaxSeqs = 0
	if _, err := u.Bounds(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "--max-seqs") {
		t.Errorf("--max-seqs 0: %v", err)
	}
}

// TestLedgerTargets: without a ledger nobody is charged; with one each
// distinct uid is charged eps, and a trace without a uid is refused.
func TestLedgerTargets(t *testing.T) {
	traces := []*trace.Trace{{UID: "a"}, {UID: "b"}, {UID: "a"}}
	if got, err := LedgerTargets(nil, traces, 1); err != nil || len(got) != 0 {
		t.Fatalf("no ledger: %v, %v", got, err)
	}
	lf, err := budget.Open(filepath.Join(t.TempDir(), "l.json"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	adm := budget.NewAdmission(lf, budget.NewRequest(budget.CIP, "test", "out", 0, false))
	got, err := LedgerTargets(adm, traces, 0.5)
	if err != nil || len(got) != 2 || got["a"] != 0.5 || got["b"] != 0.5 {
		t.Fatalf("targets %v, %v", got, err)
	}
	if _, err := LedgerTargets(adm, []*trace.Trace{{Name: "x"}}, 1); err == nil || !strings.Contains(err.Error(), "give --uid") {
		t.Fatalf("a trace without uid: %v", err)
	}
}

// TestGeoIndFlagsChooseManager: --rate alone means fixed-rate, --accuracy
// alone fixed-utility, both without --manager are refused, and a flag of
// another manager than --manager is refused.
func TestGeoIndFlagsChooseManager(t *testing.T) {
	for _, c := range []struct {
		args    []string
		manager string
		fails   bool
	}{
		{nil, "planned", false},
		{[]string{"--rate", "0.1"}, "fixed-rate", false},
		{[]string{"--accuracy", "500"}, "fixed-utility", false},
		{[]string{"--rate", "0.1", "--accuracy", "500"}, "", true},
		{[]string{"--manager", "fixed-utility", "--rate", "0.1"}, "", true},
	} {
		var g GeoIndFlags
		f := pflag.NewFlagSet("x", pflag.ContinueOnError)
		g.Add(f, true)
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := g.ChooseManager(f)
		if (err != nil) != c.fails || (!c.fails && g.Manager != c.manager) {
			t.Errorf("%v: manager %q, %v", c.args, g.Manager, err)
		}
	}
	if !IsGeoIndConfigFlag("eps-star") || IsGeoIndConfigFlag("state") {
		t.Error("IsGeoIndConfigFlag")
	}
}

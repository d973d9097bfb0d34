package sanitize

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/trace"
)

// openLedger opens a fresh ledger and an admission of a CIP release into
// it, at the options' order and radius.
func openLedger(t *testing.T, opt Options) (*budget.File, *budget.Admission) {
	t.Helper()
	lf, err := budget.Open(filepath.Join(t.TempDir(), "ledger.json"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lf.Close)
	req := budget.NewRequest(budget.CIP, "test", "out", 0, false)
	req.Lambda, req.RadiusM = opt.Lambda, opt.Radius
	return lf, budget.NewAdmission(lf, req)
}

// TestFileReleaseSettles: a one-file release that landed leaves each
// person charged their certified epsilon_max (recomputed from the
// certificate on disk), below the target it was charged first; a release
// whose files cannot land leaves nothing charged and says so.
func TestFileReleaseSettles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opt := options(familyPrior())
	lf, adm := openLedger(t, opt)
	in := []*trace.Trace{walk(30, 39.95, 116.35)}
	fr := FileRelease{In: "in.csv", Options: opt, Admission: adm,
		Files: Files{Traces: filepath.Join(dir, "out.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "out.cert.json")}}
	cert, err := fr.Release(in, &trace.Report{}, map[string]float64{"u": opt.Epsilon})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadCertificateFile(fr.Files.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	want := back.Persons[0].EpsilonMax
	if want != cert.Persons[0].EpsilonMax || !(want > 0 && want <= opt.Epsilon) {
		t.Fatalf("certified epsilon %v (returned %v), target %v", want, cert.Persons[0].EpsilonMax, opt.Epsilon)
	}
	acc := lf.Ledger().Account("u")
	if acc == nil || math.Abs(acc.Spent-want) > 1e-12 || len(lf.Ledger().PendingReleases("")) != 0 {
		t.Fatalf("ledger after a landed release: %+v, want spent %v and nothing pending", acc, want)
	}

	// Negative control: the certificate's directory is missing, so
	// nothing lands; the pending charge is undone and the error says so.
	lf2, adm2 := openLedger(t, opt)
	fr.Admission = adm2
	fr.Files.Certificate = filepath.Join(dir, "missing", "out.cert.json")
	fr.Files.Traces = filepath.Join(dir, "out2.csv")
	_, err = fr.Release(in, &trace.Report{}, map[string]float64{"u": opt.Epsilon})
	var fe *FileReleaseError
	if !errors.As(err, &fe) || fe.Step != StepWrite || !strings.Contains(fe.Charge, "nothing is charged") {
		t.Fatalf("a release that cannot land: %v", err)
	}
	if lf2.Ledger().Account("u") != nil {
		t.Fatalf("a release that did not land stays charged: %+v", lf2.Ledger().Account("u"))
	}
	if _, err := os.Stat(fr.Files.Traces); !os.IsNotExist(err) {
		t.Fatalf("the trace of a release whose certificate failed landed: %v", err)
	}
}

// TestFileReleaseRefusedDrawsNothing: a person past their budget is
// refused before anything is drawn or written.
func TestFileReleaseRefusedDrawsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opt := options(familyPrior())
	lf, err := budget.Open(filepath.Join(dir, "ledger.json"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	req := budget.NewRequest(budget.CIP, "test", "out", opt.Epsilon/2, false)
	req.Lambda, req.RadiusM = opt.Lambda, opt.Radius
	fr := FileRelease{In: "in.csv", Options: opt, Admission: budget.NewAdmission(lf, req),
		Files: Files{Traces: filepath.Join(dir, "out.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "out.cert.json")}}
	_, err = fr.Release([]*trace.Trace{walk(30, 39.95, 116.35)}, &trace.Report{}, map[string]float64{"u": opt.Epsilon})
	var fe *FileReleaseError
	var re *budget.RefusedError
	if !errors.As(err, &fe) || fe.Step != StepLedger || !errors.As(err, &re) {
		t.Fatalf("a release over budget: %v", err)
	}
	if _, err := os.Stat(fr.Files.Traces); !os.IsNotExist(err) {
		t.Fatalf("a refused release wrote its trace: %v", err)
	}
}

// TestFileReleaseStream: a CSV file streamed is charged its certified
// epsilons and settled once it landed; a file that cannot be streamed is
// left to Release (done false, nothing charged).
func TestFileReleaseStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := trace.WriteFile(in, []*trace.Trace{walk(30, 39.95, 116.35)}, trace.CSV); err != nil {
		t.Fatal(err)
	}
	opt := options(familyPrior())
	lf, adm := openLedger(t, opt)
	fr := FileRelease{In: in, Options: opt, Admission: adm,
		Files: Files{Traces: filepath.Join(dir, "out.csv"), Certificate: filepath.Join(dir, "out.cert.json")}}
	done, cert, err := fr.Stream(trace.ReadOptions{Format: trace.CSV})
	if err != nil || !done {
		t.Fatalf("stream: done %v, %v", done, err)
	}
	back, err := ReadCertificateFile(fr.Files.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	p := back.Persons[0]
	if acc := lf.Ledger().Account(p.UID); acc == nil || math.Abs(acc.Spent-p.EpsilonMax) > 1e-12 || cert.Persons[0].EpsilonMax != p.EpsilonMax {
		t.Fatalf("ledger after a streamed release: %+v, certified %v", acc, p.EpsilonMax)
	}
	lf2, adm2 := openLedger(t, opt)
	fr.Admission, fr.Options.Path = adm2, PathDense
	if done, _, err := fr.Stream(trace.ReadOptions{Format: trace.CSV}); done || err != nil {
		t.Fatalf("the dense path streamed: done %v, %v", done, err)
	}
	if len(lf2.Ledger().Charges) != 0 {
		t.Fatalf("a stream that did not start charged: %+v", lf2.Ledger().Charges)
	}
}

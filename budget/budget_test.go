package budget

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func charge(t *testing.T, path string, req Request) error {
	t.Helper()
	f, err := Open(path, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Charge(req)
}

func cipReq(budget float64, eps map[string]float64) Request {
	return Request{Mechanism: CIP, Lambda: 2, RadiusM: 100, Budget: budget, Command: "test", Output: "/somewhere/local/out.csv", Epsilon: eps}
}

// TestComposeAndRefuse: two releases of one person add up; the third,
// over the budget, is refused and leaves the ledger byte-identical.
func TestComposeAndRefuse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	for i := range 2 {
		if err := charge(t, p, cipReq(2.5, map[string]float64{"000": 1, "001": 0.5})); err != nil {
			t.Fatalf("release %d: %v", i+1, err)
		}
	}
	l, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if a := l.Account("000", CIP); a == nil || a.Spent != 2 || a.Budget != 2.5 {
		t.Fatalf("account 000: %+v, want spent 2 of 2.5", a)
	}
	if len(l.Charges) != 4 || l.Charges[0].Output != "out.csv" {
		t.Fatalf("charges %+v: want 4, output recorded by base name", l.Charges)
	}
	before, _ := os.ReadFile(p)
	err = charge(t, p, cipReq(2.5, map[string]float64{"000": 1, "001": 0.5}))
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Over) != 1 || re.Over[0].UID != "000" || re.Over[0].Spent != 2 {
		t.Fatalf("third release: %v, want refused for 000 only", err)
	}
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Fatal("a refused release changed the ledger")
	}
	// Decimal rounding: three charges of 0.1 fit a budget of 0.3.
	q := filepath.Join(t.TempDir(), "l.json")
	for i := range 3 {
		if err := charge(t, q, Request{Mechanism: GeoInd, Budget: 0.3, Epsilon: map[string]float64{"u": 0.1}}); err != nil {
			t.Fatalf("charge %d of 0.1 within 0.3: %v", i+1, err)
		}
	}
	if err := charge(t, q, Request{Mechanism: GeoInd, Budget: 0.3, Epsilon: map[string]float64{"u": 1e-6}}); err == nil {
		t.Fatal("a fourth charge past 0.3 was admitted")
	}
}

// TestBudgetRules: separate budgets per mechanism, a larger --budget needs
// RaiseBudget, a smaller one applies to its run, a CIP account keeps its
// order and radius.
func TestBudgetRules(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	if err := charge(t, p, cipReq(1, map[string]float64{"a": 1})); err != nil {
		t.Fatal(err)
	}
	// geoind has its own budget in its own unit.
	if err := charge(t, p, Request{Mechanism: GeoInd, Budget: 0.05, Epsilon: map[string]float64{"a": 0.023}}); err != nil {
		t.Fatalf("geoind after a full cip budget: %v", err)
	}
	err := charge(t, p, cipReq(3, map[string]float64{"a": 1}))
	if err == nil || !strings.Contains(err.Error(), "--raise-budget") {
		t.Fatalf("larger budget without raise: %v", err)
	}
	r := cipReq(3, map[string]float64{"a": 1})
	r.RaiseBudget = true
	if err := charge(t, p, r); err != nil {
		t.Fatalf("raise: %v", err)
	}
	l, _ := Read(p)
	if a := l.Account("a", CIP); a.Budget != 3 || len(a.Raised) != 1 || a.Raised[0].From != 1 {
		t.Fatalf("raised account %+v", a)
	}
	// A smaller budget caps this run: spent 2, budget 2.5 given.
	if err := charge(t, p, cipReq(2.5, map[string]float64{"a": 1})); err == nil {
		t.Fatal("a run with a smaller budget was not capped by it")
	}
	lo := cipReq(3, map[string]float64{"a": 0.1})
	lo.Lambda = 1.5
	if err := charge(t, p, lo); err == nil || !strings.Contains(err.Error(), "lambda") {
		t.Fatalf("lower order: %v", err)
	}
	hi := cipReq(3, map[string]float64{"a": 0.1})
	hi.Lambda, hi.RadiusM = 4, 200
	if err := charge(t, p, hi); err != nil {
		t.Fatalf("higher order and radius are covered: %v", err)
	}
}

// TestConcurrentChargesCannotOverspend: 16 goroutines, each opening the
// ledger itself (as separate processes do), race for a budget that pays
// for 5 releases; exactly 5 get through.
func TestConcurrentChargesCannotOverspend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The lock's wait is not what is tested: on a busy machine 15
			// others may hold it first, each for a durable write.
			f, err := Open(p, time.Hour)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			// Check, then (after a pause that invites a race) charge.
			req := cipReq(5, map[string]float64{"x": 1})
			if err := f.Check(req); err != nil {
				refused.Add(1)
				return
			}
			time.Sleep(time.Millisecond)
			if err := f.Charge(req); err != nil {
				t.Errorf("charge after a passed check: %v", err)
				return
			}
			ok.Add(1)
		}()
	}
	wg.Wait()
	l, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if ok.Load() != 5 || refused.Load() != 11 || l.Account("x", CIP).Spent != 5 {
		t.Fatalf("%d charged, %d refused, spent %v: want 5, 11, 5", ok.Load(), refused.Load(), l.Account("x", CIP).Spent)
	}
}

// TestDamagedLedger: a ledger that does not parse, or whose records
// disagree, is refused with an error naming the file.
func TestDamagedLedger(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := charge(t, good, cipReq(2, map[string]float64{"a": 1})); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	for name, body := range map[string]string{
		"truncated":  string(b[:len(b)/2]),
		"empty":      "",
		"spent edit": strings.Replace(string(b), `"spent": 1`, `"spent": 0.5`, 1),
		"unknown":    strings.Replace(string(b), `"version": 1`, `"version": 1, "x": 2`, 1),
		"negative":   strings.Replace(string(b), `"epsilon": 1`, `"epsilon": -1`, 1),
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if body == string(b) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		os.WriteFile(p, []byte(body), 0o644)
		_, err := Open(p, time.Second)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "backup") {
			t.Errorf("%s: %v, want an error naming %s and the fix", name, err, p)
		}
	}
}

// TestSettle: a pending upper bound is replaced by the certified epsilon,
// and a later charge sees the settled sum.
func TestSettle(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	f, err := Open(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := cipReq(2, map[string]float64{"a": 1, "b": 1})
	r.Release, r.Pending = "corpus 1", true
	if err := f.Charge(r); err != nil {
		t.Fatal(err)
	}
	if got := f.Ledger().Pending("corpus 1"); len(got) != 2 {
		t.Fatalf("pending %v", got)
	}
	if err := f.Settle("corpus 1", map[string]float64{"a": 0.75, "b": 1.5}); err == nil {
		t.Fatal("settling above the pending charge was accepted")
	}
	if err := f.Settle("corpus 1", map[string]float64{"a": 0.75}); err != nil {
		t.Fatal(err)
	}
	l, _ := Read(p)
	if l.Account("a", CIP).Spent != 0.75 || l.Account("b", CIP).Spent != 1 || len(l.Pending("corpus 1")) != 0 {
		t.Fatalf("settled ledger %+v %+v", l.Account("a", CIP), l.Account("b", CIP))
	}
}

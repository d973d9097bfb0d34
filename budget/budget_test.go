package budget

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
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

func geoReq(budget float64, eps map[string]float64) Request {
	return Request{Mechanism: GeoInd, GridM: 1, Budget: budget, Command: "test", Epsilon: eps}
}

func budgetOf(a *Account) float64 {
	if a == nil || a.Budget == nil {
		return math.NaN()
	}
	return *a.Budget
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
	if a := l.Account("000"); a == nil || a.Spent != 2 || budgetOf(a) != 2.5 {
		t.Fatalf("account 000: %+v, want spent 2 of 2.5", a)
	}
	if len(l.Charges) != 4 || l.Charges[0].Output != "out.csv" || l.Version != 2 {
		t.Fatalf("charges %+v: want 4, output recorded by base name, version 2", l.Charges)
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
		if err := charge(t, q, cipReq(0.3, map[string]float64{"u": 0.1})); err != nil {
			t.Fatalf("charge %d of 0.1 within 0.3: %v", i+1, err)
		}
	}
	if err := charge(t, q, cipReq(0.3, map[string]float64{"u": 1e-6})); err == nil {
		t.Fatal("a fourth charge past 0.3 was admitted")
	}
}

// TestOneAccountAcrossMechanisms: a person's CIP and geoind charges fill
// one account in one currency, so one budget bounds both; the geoind
// charge is recomputed here from its definition.
func TestOneAccountAcrossMechanisms(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	if err := charge(t, p, cipReq(3, map[string]float64{"a": 1})); err != nil {
		t.Fatal(err)
	}
	// 0.01 per metre on a 1 m grid at lambda 2 within 100 m: e = 0.01 (100
	// + sqrt 2) = 1.01414..., lambda e^2/2 = 1.0285 > e, so the charge is e.
	want := 0.01 * (100 + math.Sqrt2)
	if err := charge(t, p, geoReq(0, map[string]float64{"a": 0.01})); err != nil {
		t.Fatalf("geoind after cip, within the one budget: %v", err)
	}
	l, _ := Read(p)
	if len(l.Accounts) != 1 {
		t.Fatalf("%d accounts, want one per person", len(l.Accounts))
	}
	a := l.Account("a")
	c := l.Charges[1]
	if c.Mechanism != GeoInd || c.NativeEpsilon != 0.01 || math.Abs(c.Epsilon-want) > 1e-12 || math.Abs(a.Spent-(1+want)) > 1e-12 {
		t.Fatalf("geoind charge %+v, account %+v: want %v charged, %v spent", c, a, want, 1+want)
	}
	// The budget of 3 was set by the first run and holds without --budget:
	// spent 2.014, a second geoind session (1.014) would make 3.03.
	before, _ := os.ReadFile(p)
	var re *RefusedError
	if err := charge(t, p, geoReq(0, map[string]float64{"a": 0.01})); !errors.As(err, &re) {
		t.Fatalf("a geoind session past the cip-set budget: %v, want refused", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Fatal("a refusal changed the ledger")
	}
	// Small epsilons are charged lambda e^2/2.
	if err := charge(t, p, geoReq(0, map[string]float64{"b": 0.001})); err != nil {
		t.Fatal(err)
	}
	l, _ = Read(p)
	e := 0.001 * (100 + math.Sqrt2)
	if got := l.Account("b").Spent; math.Abs(got-e*e) > 1e-15 || l.Account("b").Lambda != DefaultLambda || l.Account("b").Budget != nil {
		t.Fatalf("person b: spent %v, want lambda e^2/2 = %v, account at the default order, no budget", got, e*e)
	}
}

// laplaceRenyi is the Rényi divergence of order alpha between Laplace
// distributions of scale 1 whose means differ by d (an exact d-DP pair),
// in closed form (Mironov 2017, Table II).
func laplaceRenyi(alpha, d float64) float64 {
	return math.Log(alpha/(2*alpha-1)*math.Exp((alpha-1)*d)+(alpha-1)/(2*alpha-1)*math.Exp(-alpha*d)) / (alpha - 1)
}

// TestGeoIndChargeBoundsPureDP: the conversion holds for the Laplace pair
// (pure e-DP, tight at large orders) at every order and distance tried,
// and the falsifier rejects broken conversions (e^2/2 without the order,
// e/2).
func TestGeoIndChargeBoundsPureDP(t *testing.T) {
	broken := map[string]func(e, l float64) float64{
		"e^2/2 without lambda": func(e, l float64) float64 { return math.Min(e, e*e/2) },
		"e/2":                  func(e, l float64) float64 { return e / 2 },
	}
	caught := map[string]bool{}
	for _, l := range []float64{1.5, 2, 4, 8, 32, 128} {
		for _, e := range []float64{0.01, 0.1, 0.5, 1, 2, 5} {
			d := laplaceRenyi(l, e)
			// GeoIndCharge with zero grid at radius 1 is min(e, l e^2/2).
			if b := GeoIndCharge(e, 0, l, 1); d > b*(1+1e-12) {
				t.Errorf("lambda %v, e %v: Laplace D = %v above the charge %v", l, e, d, b)
			}
			for name, f := range broken {
				if d > f(e, l)*(1+1e-9) {
					caught[name] = true
				}
			}
		}
	}
	for name := range broken {
		if !caught[name] {
			t.Errorf("negative control %q was not caught", name)
		}
	}
}

// TestBudgetRules: a larger --budget needs RaiseBudget, a smaller one
// applies to its run, an account keeps its order and radius, and an
// account without a budget records charges until one is set.
func TestBudgetRules(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	if err := charge(t, p, cipReq(0, map[string]float64{"a": 1})); err != nil {
		t.Fatalf("recording without a budget: %v", err)
	}
	if err := charge(t, p, cipReq(0, map[string]float64{"a": 5})); err != nil {
		t.Fatalf("recording without a budget: %v", err)
	}
	if err := charge(t, p, cipReq(7, map[string]float64{"a": 1.5})); err == nil {
		t.Fatal("setting a budget below what the run would spend was accepted")
	}
	if err := charge(t, p, cipReq(8, map[string]float64{"a": 1})); err != nil {
		t.Fatal(err)
	}
	err := charge(t, p, cipReq(9, map[string]float64{"a": 1}))
	if err == nil || !strings.Contains(err.Error(), "--raise-budget") {
		t.Fatalf("larger budget without raise: %v", err)
	}
	r := cipReq(9, map[string]float64{"a": 1})
	r.RaiseBudget = true
	if err := charge(t, p, r); err != nil {
		t.Fatalf("raise: %v", err)
	}
	l, _ := Read(p)
	if a := l.Account("a"); budgetOf(a) != 9 || len(a.Raised) != 1 || a.Raised[0].From != 8 || a.Spent != 8 {
		t.Fatalf("raised account %+v", a)
	}
	// A smaller budget caps this run: spent 8, budget 8.5 given.
	if err := charge(t, p, cipReq(8.5, map[string]float64{"a": 1})); err == nil {
		t.Fatal("a run with a smaller budget was not capped by it")
	}
	lo := cipReq(0, map[string]float64{"a": 0.1})
	lo.Lambda = 1.5
	if err := charge(t, p, lo); err == nil || !strings.Contains(err.Error(), "lambda") {
		t.Fatalf("lower order: %v", err)
	}
	hi := cipReq(0, map[string]float64{"a": 0.1})
	hi.Lambda, hi.RadiusM = 4, 200
	if err := charge(t, p, hi); err != nil {
		t.Fatalf("higher order and radius are covered: %v", err)
	}
}

// TestAdmissionUndo: a pending charge whose release did not land is
// removed with the account it opened, leaving the ledger as it was; a
// settled charge is not undone; Pending lists what a crash left.
func TestAdmissionUndo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	if err := charge(t, p, cipReq(5, map[string]float64{"old": 1})); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	f, err := Open(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := cipReq(5, nil)
	r.Release = "corpus x"
	a := NewAdmission(f, r)
	if err := a.Charge("unit 1", map[string]float64{"old": 1, "new": 1}); err != nil {
		t.Fatal(err)
	}
	if err := a.Charge("unit 2", map[string]float64{"n2": 1}); err != nil {
		t.Fatal(err)
	}
	if got := pendingKeys(t, a); len(got) != 2 || got[0] != "unit 1" || got[1] != "unit 2" {
		t.Fatalf("pending %v", got)
	}
	if err := a.Undo("unit 1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Settle("unit 2", map[string]float64{"n2": 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := a.Undo("unit 2"); err != nil {
		t.Fatal(err)
	}
	l := f.Ledger()
	if l.Account("new") != nil || l.Account("n2").Spent != 0.5 || len(l.Charges) != 2 || l.Charges[1].Seq != 2 || len(pendingKeys(t, a)) != 0 {
		t.Fatalf("after undo and settle: %+v", l)
	}
	// Undoing the only new charge restores the file.
	if err := a.Charge("unit 3", map[string]float64{"zz": 1}); err != nil {
		t.Fatal(err)
	}
	if err := a.Undo("unit 3"); err != nil {
		t.Fatal(err)
	}
	if err := a.Undo("unit 2"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if bytes.Contains(after, []byte(`"zz"`)) || !bytes.Contains(after, []byte(`"n2"`)) || bytes.Equal(before, after) {
		t.Fatalf("ledger after undo:\n%s", after)
	}
	var nilA *Admission
	if nilA.Check(map[string]float64{"a": 1e9}) != nil || nilA.Charge("k", nil) != nil || pendingKeys(t, nilA) != nil {
		t.Fatal("a nil Admission charges")
	}
}

// TestMigrateV1: a version-1 ledger's two accounts of a person become one,
// conservatively (the smaller budget, every charge converted); one with
// geoind charges needs the grid, and says how to give it.
func TestMigrateV1(t *testing.T) {
	v1 := `{"version": 1, "composition": "basic",
  "accounts": [
    {"uid": "a", "mechanism": "cip", "unit": "u", "budget": 3, "spent": 1, "lambda": 2, "radius_m": 100, "opened": "2026-01-02T10:00:00Z"},
    {"uid": "a", "mechanism": "geoind", "unit": "u", "budget": 0.02, "spent": 0.01, "opened": "2026-01-01T10:00:00Z"},
    {"uid": "b", "mechanism": "cip", "unit": "u", "budget": 2, "spent": 0.5, "lambda": 4, "radius_m": 200, "opened": "2026-01-03T10:00:00Z"}
  ],
  "charges": [
    {"seq": 1, "uid": "a", "mechanism": "geoind", "epsilon": 0.01, "time": "2026-01-01T10:00:00Z", "command": "q"},
    {"seq": 2, "uid": "a", "mechanism": "cip", "epsilon": 1, "lambda": 2, "radius_m": 100, "time": "2026-01-02T10:00:00Z", "command": "s"},
    {"seq": 3, "uid": "b", "mechanism": "cip", "epsilon": 0.5, "lambda": 4, "radius_m": 200, "time": "2026-01-03T10:00:00Z", "command": "s", "release": "r", "pending": true}
  ]}`
	dir := t.TempDir()
	p := filepath.Join(dir, "v1.json")
	os.WriteFile(p, []byte(v1), 0o644)
	_, err := Open(p, time.Second)
	if !errors.Is(err, ErrNeedsGrid) || !strings.Contains(err.Error(), "tracepriv ledger migrate --ledger "+p+" --grid") {
		t.Fatalf("v1 with geoind charges: %v, want the migrate command named", err)
	}
	l, err := Migrate(p, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	geo := 0.01 * (100 + math.Sqrt2)
	a, b := l.Account("a"), l.Account("b")
	if len(l.Accounts) != 2 || a.Lambda != 2 || a.RadiusM != 100 || math.Abs(budgetOf(a)-math.Min(3, 2*geo)) > 1e-12 || math.Abs(a.Spent-(1+geo)) > 1e-12 {
		t.Fatalf("person a: %+v, want one account at 2/100 m, budget min(3, %v), spent 1 + %v", a, 2*geo, geo)
	}
	if b.Lambda != 4 || budgetOf(b) != 2 || len(l.Pending("r")) != 1 || l.Charges[0].Mechanism != GeoInd || l.Charges[0].NativeEpsilon != 0.01 {
		t.Fatalf("person b %+v, charges %+v", b, l.Charges)
	}
	if back, err := Read(p); err != nil || back.Version != 2 || len(back.Charges) != 3 {
		t.Fatalf("migrated file: %v %+v", err, back)
	}
	// A cip-only version-1 ledger migrates on open and is written as
	// version 2 with the next charge.
	q := filepath.Join(dir, "cip.json")
	cipOnly := strings.Replace(strings.Replace(v1, `{"seq": 1, "uid": "a", "mechanism": "geoind", "epsilon": 0.01, "time": "2026-01-01T10:00:00Z", "command": "q"},`, "", 1),
		`{"uid": "a", "mechanism": "geoind", "unit": "u", "budget": 0.02, "spent": 0.01, "opened": "2026-01-01T10:00:00Z"},`, "", 1)
	cipOnly = strings.NewReplacer(`"seq": 2`, `"seq": 1`, `"seq": 3`, `"seq": 2`).Replace(cipOnly)
	os.WriteFile(q, []byte(cipOnly), 0o644)
	if err := charge(t, q, cipReq(0, map[string]float64{"a": 2})); err != nil {
		t.Fatalf("charging a migrated cip-only ledger: %v", err)
	}
	if err := charge(t, q, cipReq(0, map[string]float64{"a": 0.5})); err == nil {
		t.Fatal("the migrated budget of 3 was not enforced")
	}
	if back, err := Read(q); err != nil || back.Version != 2 || back.Account("a").Spent != 3 {
		t.Fatalf("migrated on open: %v %+v", err, back)
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
	if ok.Load() != 5 || refused.Load() != 11 || l.Account("x").Spent != 5 {
		t.Fatalf("%d charged, %d refused, spent %v: want 5, 11, 5", ok.Load(), refused.Load(), l.Account("x").Spent)
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
	if err := charge(t, good, geoReq(0, map[string]float64{"a": 0.005})); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	for name, body := range map[string]string{
		"truncated":    string(b[:len(b)/2]),
		"empty":        "",
		"spent edit":   strings.Replace(string(b), `"spent": 1.257`, `"spent": 0.5`, 1),
		"unknown":      strings.Replace(string(b), `"version": 2`, `"version": 2, "x": 2`, 1),
		"negative":     strings.Replace(string(b), `"epsilon": 1,`, `"epsilon": -1,`, 1),
		"charged edit": strings.Replace(string(b), `"native_epsilon": 0.005`, `"native_epsilon": 0.001`, 1),
		"version 3":    strings.Replace(string(b), `"version": 2`, `"version": 3`, 1),
		"two accounts": strings.Replace(string(b), `"accounts": [`, `"accounts": [{"uid": "a", "unit": "u", "lambda": 2, "radius_m": 100, "budget": null, "spent": 0, "opened": "2026-01-01T00:00:00Z"},`, 1),
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
	if l.Account("a").Spent != 0.75 || l.Account("b").Spent != 1 || len(l.Pending("corpus 1")) != 0 {
		t.Fatalf("settled ledger %+v %+v", l.Account("a"), l.Account("b"))
	}
}

// A release certified with no guarantee (epsilon 0: a person the prior was
// fitted on, released with --allow-prior-overlap) stays charged what was
// charged before it was drawn; a certified epsilon settles the charge down.
func TestSettleNoGuaranteeKeepsCharge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	f, err := Open(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := cipReq(5, nil)
	r.Release = "corpus y"
	a := NewAdmission(f, r)
	if err := a.Charge("unit", map[string]float64{"overlap": 1, "fine": 1}); err != nil {
		t.Fatal(err)
	}
	if err := a.Settle("unit", map[string]float64{"overlap": 0, "fine": 0.4}); err != nil {
		t.Fatal(err)
	}
	l := f.Ledger()
	if got := l.Account("overlap").Spent; got != 1 {
		t.Errorf("a release with no guarantee settled to %v, want the 1 charged", got)
	}
	if got := l.Account("fine").Spent; got != 0.4 {
		t.Errorf("a certified release settled to %v, want 0.4", got)
	}
	if len(pendingKeys(t, a)) != 0 {
		t.Errorf("still pending: %v", pendingKeys(t, a))
	}
}

// TestAccountCostIsTheLedgersCharge: the conversion and the admission rule
// a service applies to its own accounts (Account.Cost, Account.Covers,
// Fits) are the ones the ledger file charges and checks with: for random
// requests, File.Cost and File.Check agree with them, and a charge one
// ulp-scale step beyond the tolerance is refused by both.
func TestAccountCostIsTheLedgersCharge(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 33))
	for i := range 40 {
		lambda, radius := 1.5+rng.Float64()*6, 20+rng.Float64()*400
		grid, eps := 0.5+rng.Float64()*20, 1e-4+rng.Float64()*0.05
		b := 0.5 + rng.Float64()*10
		dir := t.TempDir()
		f, err := Open(filepath.Join(dir, "l.json"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Charge(Request{Mechanism: CIP, Lambda: lambda, RadiusM: radius, Budget: b, Epsilon: map[string]float64{"p": b / 3}}); err != nil {
			t.Fatal(err)
		}
		a := f.Ledger().Account("p")
		req := Request{Mechanism: GeoInd, GridM: grid, Epsilon: map[string]float64{"p": eps}}
		want := GeoIndCharge(eps, grid, lambda, radius)
		if got := a.Cost(GeoInd, eps, grid); got != want || f.Cost(req, "p") != got {
			t.Fatalf("case %d: Account.Cost %v, File.Cost %v, GeoIndCharge %v", i, got, f.Cost(req, "p"), want)
		}
		if got := a.Cost(CIP, 0.7, 0); got != 0.7 {
			t.Fatalf("case %d: a cip release costs %v, want its certified 0.7", i, got)
		}
		fits := Fits(a.Spent, want, *a.Budget)
		if err := f.Check(req); (err == nil) != fits {
			t.Fatalf("case %d: File.Check %v, Fits %v (spent %v + %v of %v)", i, err, fits, a.Spent, want, *a.Budget)
		}
		f.Close()
		if !a.Covers(lambda, radius) || !a.Covers(lambda+1, radius*2) || a.Covers(lambda*0.99, radius) || a.Covers(lambda, radius*0.99) {
			t.Fatalf("case %d: Covers at lambda %v radius %v", i, lambda, radius)
		}
	}
	if !Fits(1, 1, 2) || !Fits(0.1+0.1, 0.1, 0.3) || Fits(1, 1+3e-9, 2) {
		t.Error("Fits: the tolerance is 1e-9 relative")
	}
}

// TestAdmissionChargeAndUndoNote: Charge refuses a person past their
// budget and charges nothing (File.Charge checks first); within it, it
// charges the bound as pending, which UndoNote removes and says so. A nil
// Admission charges and notes nothing.
func TestAdmissionChargeAndUndoNote(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.json")
	f, err := Open(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := cipReq(1, nil)
	r.Release = "file x"
	a := NewAdmission(f, r)
	var re *RefusedError
	if err := a.Charge("", map[string]float64{"u": 2}); !errors.As(err, &re) || len(f.Ledger().Charges) != 0 {
		t.Fatalf("over budget: %v, charges %+v", err, f.Ledger().Charges)
	}
	if err := a.Charge("", map[string]float64{"u": 0.5}); err != nil {
		t.Fatal(err)
	}
	if got := f.Ledger().Pending(a.Release("")); got["u"] != 0.5 {
		t.Fatalf("pending after Charge: %v", got)
	}
	if note := a.UndoNote(); !strings.Contains(note, "nothing is charged in the ledger "+p) {
		t.Fatalf("UndoNote: %q", note)
	}
	if len(f.Ledger().Charges) != 0 {
		t.Fatalf("after UndoNote: %+v", f.Ledger().Charges)
	}
	var nilA *Admission
	if nilA.Charge("", map[string]float64{"u": 1e9}) != nil || nilA.UndoNote() != "" {
		t.Fatal("a nil Admission admits or notes")
	}
}

// pendingKeys is a.Pending, failing t on an error.
func pendingKeys(t *testing.T, a *Admission) []string {
	t.Helper()
	keys, err := a.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

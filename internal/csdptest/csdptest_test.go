package csdptest

import "testing"

// A reduced-accuracy answer (csdp exit 3, "Partial Success") is compared
// within the accuracy it reports; one too inaccurate, or a csdp failure,
// is not compared; a full answer at 1e-6.
func TestAnswerTolerance(t *testing.T) {
	partial := []byte(`CSDP 6.2.0
Partial Success: SDP solved with reduced accuracy
Primal objective value: 2.0000100e+00 
Dual objective value: 2.0000000e+00 
Relative primal infeasibility: 1.20e-07 
Relative dual infeasibility: 3.00e-08 
Real Relative Gap: 2.50e-06 
XZ Relative Gap: 1.00e-07 
DIMACS error measures: 1.20e-07 0.00e+00 3.00e-08 0.00e+00 2.50e-06 1.00e-07
`)
	a, err := Parse(partial, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.Primal != 2.00001 || a.Dual != 2 || a.Accuracy != 2.5e-6 {
		t.Fatalf("parsed %+v", a)
	}
	tol, ok, _ := a.Tolerance()
	if !ok || tol != 2.5e-5 {
		t.Fatalf("tolerance %g, %v; want 2.5e-5 (ten times the reported gap)", tol, ok)
	}
	// Our answer within the reported accuracy passes; one off by more
	// than it fails (a wrong solver of ours is still caught).
	if compared, err := a.Compare(2.00001, 2.000001); !compared || err != nil {
		t.Errorf("an answer within csdp's reported accuracy: compared %v, %v", compared, err)
	}
	if compared, err := a.Compare(2.001, 2.000001); !compared || err == nil {
		t.Errorf("an answer 5e-4 off: compared %v, %v; want a disagreement", compared, err)
	}
	if _, ok, why := (Reply{Code: 3, Accuracy: 0.01}).Tolerance(); ok || why == "" {
		t.Error("a 1 % accurate answer is compared")
	}
	if _, ok, why := (Reply{Code: 7}).Tolerance(); ok || why == "" {
		t.Error("a csdp failure is compared")
	}
	if _, err := Parse([]byte("Success: SDP solved\n"), 0); err == nil {
		t.Error("an answer without objectives parsed")
	}
}

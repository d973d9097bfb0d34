package prior

import (
	"reflect"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/gp"
)

// TestPaperOptions: every field of PaperOptions reaches Options under its
// name (a field dropped in the conversion fails here), and the zero value
// is the paper's mode, not the comparison.
func TestPaperOptions(t *testing.T) {
	full := PaperOptions{Kernel: "matern32", MinDuration: time.Second, MaxDuration: time.Hour, MaxPoints: 7, MinPoints: 5,
		PaperWindows: true, Family: [2]float64{0.1, 0.9}, InitLengthscale: 3, FitOptions: &gp.FitOptions{}, Workers: 2,
		Progress: func(int, int) {}, Corpus: "c"}
	pv, ov := reflect.ValueOf(full), reflect.ValueOf(full.Options())
	for i := 0; i < pv.NumField(); i++ {
		name := pv.Type().Field(i).Name
		f := ov.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("Options has no field %s", name)
			continue
		}
		if pv.Field(i).IsZero() || f.IsZero() {
			t.Errorf("PaperOptions.%s is not carried to Options", name)
		}
	}
	zero := PaperOptions{}.Options()
	if zero.Compare() || zero.Kernel != DefaultKernel {
		t.Errorf("zero PaperOptions: %+v compares kernels, want the paper's %s fit", zero, DefaultKernel)
	}
	d, err := zero.withDefaults()
	if err != nil || d.MaxPoints != DefaultMaxPoints || d.MinDuration != DefaultMinDuration || d.Family != [2]float64{DefaultFamilyLow, DefaultFamilyHigh} {
		t.Errorf("zero PaperOptions resolve to %+v, %v; want the paper's defaults", d, err)
	}
	// Negative control: a zero Options is the other mode.
	if !(Options{}).Compare() {
		t.Error("zero Options no longer compares kernels")
	}
}

// TestFitPaperIsFit: FitPaper is Fit on the resolved options, result for
// result.
func TestFitPaperIsFit(t *testing.T) {
	t.Parallel()
	traces := gpTraces(t, 3, regular(0, 2, 400), 20, 25, 31)
	p1, r1, err := FitPaper(traces, PaperOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	p2, r2, err := Fit(traces, Options{Kernel: "rbf", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p1, p2) || !reflect.DeepEqual(r1, r2) {
		t.Error("FitPaper and Fit with Kernel rbf differ")
	}
	if p1.Kernel != "rbf" || p1.Fit == nil || p1.Fit.Windows == 0 {
		t.Errorf("FitPaper prior %+v", p1)
	}
}

package prior

import (
	"reflect"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/gp"
)

// TestPaperOptions: every field of PaperOptions reaches config under its
// name (a field dropped in the conversion fails here), and the zero value
// is the paper's mode, not the comparison.
func TestPaperOptions(t *testing.T) {
	full := PaperOptions{Kernel: "matern32", MinDuration: time.Second, MaxDuration: time.Hour, MaxPoints: 7, MinPoints: 5,
		PaperWindows: true, Family: [2]float64{0.1, 0.9}, InitLengthscale: 3, FitOptions: &gp.FitOptions{}, Workers: 2,
		Progress: func(int, int) {}, Corpus: "c"}
	pv, ov := reflect.ValueOf(full), reflect.ValueOf(full.config())
	for i := 0; i < pv.NumField(); i++ {
		name := pv.Type().Field(i).Name
		f := ov.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("config has no field %s", name)
			continue
		}
		if pv.Field(i).IsZero() || f.IsZero() {
			t.Errorf("PaperOptions.%s is not carried to config", name)
		}
	}
	zero := PaperOptions{}.config()
	if zero.compare() || zero.Kernel != DefaultKernel {
		t.Errorf("zero PaperOptions: %+v compares kernels, want the paper's %s fit", zero, DefaultKernel)
	}
	d, err := zero.withDefaults()
	if err != nil || d.MaxPoints != DefaultMaxPoints || d.MinDuration != DefaultMinDuration || d.Family != [2]float64{DefaultFamilyLow, DefaultFamilyHigh} {
		t.Errorf("zero PaperOptions resolve to %+v, %v; want the paper's defaults", d, err)
	}
	// Negative control: a zero config is the other mode.
	if !(config{}).compare() {
		t.Error("zero config no longer compares kernels")
	}
}

// TestOptionsCompare: every field of Options reaches config under its
// name, and no Options, whatever its fields, selects the paper's mode
// (Options has no field that config reads to switch it): Fit compares
// kernels, FitPaper fits one.
func TestOptionsCompare(t *testing.T) {
	full := Options{Kernels: []string{"rbf"}, MinDuration: time.Second, MaxDuration: time.Hour, MaxPoints: 70, MinPoints: 50,
		MinSpacing: time.Second, MaxWindows: 3, BoundFactor: 4, MinWinShare: 0.5, Family: [2]float64{0.1, 0.9}, Workers: 2,
		Progress: func(int, int) {}, Corpus: "c"}
	ov, cv := reflect.ValueOf(full), reflect.ValueOf(full.config())
	for i := 0; i < ov.NumField(); i++ {
		name := ov.Type().Field(i).Name
		f := cv.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("config has no field %s", name)
			continue
		}
		if ov.Field(i).IsZero() || f.IsZero() {
			t.Errorf("Options.%s is not carried to config", name)
		}
		if name == "Kernel" || name == "PaperWindows" {
			t.Errorf("Options.%s would select the paper's mode", name)
		}
	}
	if !full.config().compare() || !(Options{}).config().compare() {
		t.Error("an Options does not compare kernels")
	}
	// Negative control: the paper's options are the other mode.
	if (PaperOptions{}).config().compare() {
		t.Error("zero PaperOptions compares kernels")
	}
}

// TestFitPaperIsFit: FitPaper is the shared fit on the paper's resolved
// options, result for result, and Fit on the same traces is the other
// mode.
func TestFitPaperIsFit(t *testing.T) {
	t.Parallel()
	traces := gpTraces(t, 3, regular(0, 2, 400), 20, 25, 31)
	p1, r1, err := FitPaper(traces, PaperOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	p2, r2, err := fit(traces, config{Kernel: "rbf", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p1, p2) || !reflect.DeepEqual(r1, r2) {
		t.Error("FitPaper and fit with Kernel rbf differ")
	}
	if p1.Kernel != "rbf" || p1.Fit == nil || p1.Fit.Windows == 0 {
		t.Errorf("FitPaper prior %+v", p1)
	}
}

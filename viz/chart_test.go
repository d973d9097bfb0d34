package viz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestChartAndLegendCorner(t *testing.T) {
	// A falling curve: the top right and bottom left hold points, the
	// bottom left most of them, the top right none.
	falling := plotter.XYs{{X: 0, Y: 10}, {X: 1, Y: 9}, {X: 2, Y: 2}, {X: 3, Y: 1}, {X: 4, Y: 0.9}, {X: 5, Y: 0.8}, {X: 10, Y: 0.5}}
	left, bottom := emptiestCorner([]Line{{XY: falling}}, 0, 10, false, false)
	if left || bottom {
		t.Errorf("falling curve: legend left=%v bottom=%v, want top right", left, bottom)
	}
	rising := plotter.XYs{{X: 0, Y: 0}, {X: 5, Y: 5}, {X: 9, Y: 9}, {X: 10, Y: 10}}
	if left, bottom := emptiestCorner([]Line{{XY: rising}}, 0, 10, false, false); !left || bottom {
		t.Errorf("rising curve: legend left=%v bottom=%v, want top left", left, bottom)
	}
	lo, hi := 2.0, 3.0
	p, err := Chart([]Line{{Label: "f", XY: falling, Points: true}, {Label: "g", XY: rising, Dashed: true}},
		ChartOptions{Title: "t", Band: &[2]float64{lo, hi}, BandLabel: "band", Marker: &lo, MarkerLabel: "m", LegendAuto: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(p, filepath.Join(t.TempDir(), "c.png"), 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Chart(nil, ChartOptions{}); err == nil {
		t.Error("empty chart accepted")
	}
}

func TestXYsAndSaveRow(t *testing.T) {
	xy := XYs([]float64{1, 2}, []float64{3, 4})
	if len(xy) != 2 || xy[1].X != 2 || xy[1].Y != 4 {
		t.Fatalf("XYs: %v", xy)
	}
	defer func() {
		if recover() == nil {
			t.Error("XYs of unequal slices did not panic")
		}
	}()
	p, err := Chart([]Line{{Label: "a", XY: xy}}, ChartOptions{Title: "row"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "row.svg")
	if err := SaveRow(path, 20*Centimetre, 8*Centimetre, p, p); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("SaveRow wrote nothing: %v", err)
	}
	XYs([]float64{1}, nil)
}

// Issue 32: a uniform baseline 1,000 times the release's count-query error
// flattened the release's bar on a linear axis. With LogY each bar's
// height (its axis position above the floor) is readable: the release's is
// at least a third of the baseline's, where a linear axis gives it 0.1 %.
func TestBarsLogYKeepsSmallBarsReadable(t *testing.T) {
	series := []BarSeries{{Label: "released", Values: []float64{0.5, 0.02}}, {Label: "uniform", Values: []float64{500, 30}}, {Label: "non-private", Values: []float64{0, 0.001}}}
	height := func(opt BarOptions) (rel, uni float64) {
		p, err := Bars([]string{"query ARE", "paper ARE"}, series, opt)
		if err != nil {
			t.Fatal(err)
		}
		return p.Y.Norm(0.5), p.Y.Norm(500)
	}
	rel, uni := height(BarOptions{LogY: true, ValueLabels: true})
	if !(rel >= uni/3) || !(uni <= 1) {
		t.Errorf("log axis: released bar at %.3g of the axis, uniform at %.3g; want the released one at least a third of the uniform one", rel, uni)
	}
	// The negative control: the linear axis this replaced.
	if rel, uni := height(BarOptions{}); rel >= uni/3 {
		t.Errorf("linear axis: released bar at %.3g, uniform at %.3g; the control should show the flattening", rel, uni)
	}
	// Every value is written on its bar, so the log axis is not read
	// alone, and the figure renders.
	p, err := Bars([]string{"query ARE", "paper ARE"}, series, BarOptions{LogY: true, ValueLabels: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bars.svg")
	if err := Save(p, path, 12*Centimetre, 9*Centimetre); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">0.5<", ">0.02<", ">500<", ">30<", ">0<", ">0.001<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the figure does not write the value %s on its bar", want)
		}
	}
}

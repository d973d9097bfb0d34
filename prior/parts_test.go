package prior

import (
	"reflect"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// TestCountQuantile: the quantile of counted values is the type-7
// quantile of the values themselves, bit for bit, with repeats, odd and
// even counts, and one value.
func TestCountQuantile(t *testing.T) {
	rng := newRand(5)
	for _, n := range []int{1, 2, 3, 10, 101, 1000} {
		x := make([]float64, n)
		c := map[float64]int{}
		for i := range x {
			// Few distinct values, so that order statistics repeat.
			x[i] = 39.9 + float64(rng.IntN(max(1, n/3)))*1e-5
			c[x[i]]++
		}
		for _, q := range []float64{0, 0.25, 0.5, 0.6, 0.75, 1} {
			if got, want := countQuantile(c, q), quantile(x, q); got != want {
				t.Errorf("n %d q %v: %v from counts, %v from values", n, q, got, want)
			}
		}
	}
}

// TestFitInParts: cutting each trace alone, fitting every window with
// FitWindow, merging the reports and positions, and combining gives the
// prior and report Fit gives over the whole corpus, with one kernel and
// with the kernel comparison (fingerprints included).
func TestFitInParts(t *testing.T) {
	t.Parallel()
	// An equality, as strict on two short traces' windows as on more or
	// longer ones: the full suite checks it at -short's size too. 100
	// fixes (8 minutes) give each trace two windows of the single kernel's
	// 4 minutes and one of the comparison's (160: three and one, at four
	// times the CPU).
	ts := regular(0, 5, 100)
	traces := gpTraces(t, 2, ts, 25, 20, 41)
	traces = append(traces, enuTrace("still", regular(0, 5, 60), make([]float64, 60), regular(0, 5, 60)))
	traces = append(traces, walkTrace(regular(0, 30, 8))) // too short: skipped windows only
	for _, opt := range []config{
		{Kernel: "rbf", Family: [2]float64{0.2, 0.8}, Corpus: "parts", Workers: 2},
		{Kernels: []string{"rbf", "matern32"}, MinDuration: 4 * time.Minute, MinSpacing: 5 * time.Second, Corpus: "parts", Workers: 2},
	} {
		want, wantRep, err := fit(traces, opt)
		if err != nil {
			t.Fatal(err)
		}

		rep := &Report{}
		var pos Positions
		var results []WindowResult
		for i, tr := range traces {
			ws, r, err := Windows([]*trace.Trace{tr}, opt)
			if err != nil {
				t.Fatal(err)
			}
			rep.Merge(r)
			var one Positions
			one.Add(tr)
			pos.Merge(one)
			for _, w := range ws {
				w.Trace = i
				res, err := FitWindow(w, tr, opt)
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, res)
			}
		}
		rep.Workers = wantRep.Workers
		got, gotRep, err := CombineCorpus(results, rep, pos, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("prior in parts\n%+v\nwhole\n%+v", got, want)
		}
		if !reflect.DeepEqual(gotRep, wantRep) {
			t.Errorf("report in parts\n%+v\nwhole\n%+v", gotRep, wantRep)
		}
		if wantRep.Skipped[SkipConstant] != 1 || wantRep.Skipped[SkipTooShort] == 0 {
			t.Errorf("the corpus should skip a constant window and short ones: %v", wantRep.Skipped)
		}
		x := trace.CorpusIndexOf(traces...)
		x.Prior, _ = want.Digest()
		if !want.Fit.CorpusIndexed || !reflect.DeepEqual(wantRep.CorpusIndex, x) || len(x.Persons) != 3 {
			t.Errorf("corpus index %+v, want %+v", wantRep.CorpusIndex, x)
		}
	}
}

// A corpus in one city records its centre; one whose people travel
// between cities 1,060 km apart records none and says why (a median of the
// latitudes and of the longitudes would lie between them).
func TestCentreMultiRegion(t *testing.T) {
	city := func(uid string, lat, lon float64) *trace.Trace {
		tr := &trace.Trace{UID: uid}
		for i := range 100 {
			tr.Points = append(tr.Points, trace.Point{Time: testStart.Add(time.Duration(i) * time.Second), Lat: lat + 1e-4*float64(i), Lon: lon})
		}
		return tr
	}
	var one Positions
	one.Add(city("a", 39.9, 116.4), city("b", 39.95, 116.3))
	if c := one.Centre("x"); c == nil || one.Span() > 20_000 {
		t.Errorf("one city: centre %v, span %.0f m", c, one.Span())
	}
	var two Positions
	two.Add(city("a", 39.9, 116.4), city("b", 45.75, 126.65))
	var rep Report
	centreWarnings(&rep, two)
	if c := two.Centre("x"); c != nil || two.Span() < 1_000_000 || len(rep.Warnings) != 1 {
		t.Errorf("two cities: centre %v, span %.0f m, warnings %q", c, two.Span(), rep.Warnings)
	}
}

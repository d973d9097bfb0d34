package trajdb

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

func TestUniformSequences(t *testing.T) {
	t.Parallel()
	db := &DB{Size: 7, Users: []User{{ID: "a", Seqs: [][]int{{1}, {2, 3}}}, {ID: "b", Seqs: [][]int{{4}}}}}
	for range 3000 {
		db.Users[1].Seqs = append(db.Users[1].Seqs, []int{5})
	}
	const maxLen = 5
	u, err := UniformSequences(db.Len(), db.Size, maxLen, noise.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != db.Len() {
		t.Fatalf("%d sequences, want the database's %d", len(u), db.Len())
	}
	var lens [maxLen + 1]float64
	var syms [7]float64
	total := 0.0
	for _, s := range u {
		lens[len(s)]++
		for _, x := range s {
			syms[x]++
			total++
		}
	}
	// Chi-square goodness of fit to the uniform laws; the 0.999 quantiles
	// are 18.47 (4 degrees of freedom) and 22.46 (6).
	chi := func(obs []float64, n float64) float64 {
		e := n / float64(len(obs))
		c := 0.0
		for _, o := range obs {
			c += (o - e) * (o - e) / e
		}
		return c
	}
	if c := chi(lens[1:], float64(len(u))); c > 18.47 {
		t.Errorf("lengths %v: chi-square %.1f, not uniform on 1..%d", lens[1:], c, maxLen)
	}
	if c := chi(syms[:], total); c > 22.46 {
		t.Errorf("symbols %v: chi-square %.1f, not uniform", syms, c)
	}
	if _, err := UniformSequences(db.Len(), db.Size, 0, nil); err == nil {
		t.Error("maximum length 0 accepted")
	}
	np, err := NonPrivateBaseline(db, Bounds{MaxLen: 1, MaxSeqs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{1}, {4}}; !reflect.DeepEqual(np, want) {
		t.Errorf("non-private baseline %v, want the bounded data %v", np, want)
	}
}

// baselineGeolifeDir is the shared GeoLife sample (users 000-007, 78 PLT files).
const baselineGeolifeDir = "../../shared/data/geolife"

// TestGeoLife maps the whole GeoLife sample into a 300 m grid over a public
// box around Beijing, and checks that the uniform baseline is far worse
// than the data against itself.
func TestGeoLife(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(baselineGeolifeDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no GeoLife data at %s", dir)
	}
	g, err := NewGrid(universeTestBox, 300)
	if err != nil {
		t.Fatal(err)
	}
	db, rep, err := FromFiles(g, []string{dir}, trace.ReadOptions{}, MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("grid: %s, max distortion %.1e", g, g.MaxDistortion())
	t.Logf("mapping: %s", rep)
	t.Logf("reading: %d files, %d rows skipped or merged, %d files skipped", rep.Read.Files, rep.Read.SkippedRows(), len(rep.Read.SkippedFiles))
	if rep.Read.Files != 78 || len(rep.Read.SkippedFiles) != 0 || rep.Persons != 8 {
		t.Errorf("read %d files (%d skipped) of %d persons, want all 78 of 8", rep.Read.Files, len(rep.Read.SkippedFiles), rep.Persons)
	}
	if rep.Fixes != rep.Symbols+rep.ShortSymbols+rep.Repeats+rep.Outside {
		t.Errorf("fixes do not add up: %+v", rep)
	}
	// The box must cover most of the data (the rest is a trip to Tianjin
	// by 006 and excursions west of 116.15°E by 001 and 007), and the
	// fixes counted outside are exactly those outside the box.
	frac := float64(rep.Outside) / float64(rep.Fixes)
	t.Logf("%d of %d fixes (%.1f %%) fall outside the box", rep.Outside, rep.Fixes, 100*frac)
	if frac > 0.10 {
		t.Errorf("the box misses %.1f %% of the fixes", 100*frac)
	}
	outside, fixes := 0, 0
	files, _, _ := trace.Files(dir)
	for _, f := range files {
		trs, _, err := trace.ReadFile(f, trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			for _, p := range tr.Points {
				fixes++
				bb := universeTestBox
				if p.Lat < bb.MinLat || p.Lat > bb.MaxLat || p.Lon < bb.MinLon || p.Lon > bb.MaxLon {
					outside++
				}
			}
		}
	}
	if outside != rep.Outside || fixes != rep.Fixes {
		t.Errorf("mapping counts %d of %d fixes outside; the box test gives %d of %d", rep.Outside, rep.Fixes, outside, fixes)
	}
	if err := db.Validate(); err != nil {
		t.Fatal(err)
	}
	var lens []float64
	for _, s := range db.Sequences() {
		lens = append(lens, float64(len(s)))
	}
	t.Logf("trajectories per person: %v", geolifeSeqsPerPerson(db))
	t.Logf("lengths: median %v, max %v", geolifeMedian(lens), geolifeMax(lens))

	b := Bounds{MaxLen: 20, MaxSeqs: 100}
	real, err := NonPrivateBaseline(db, b)
	if err != nil {
		t.Fatal(err)
	}
	bounded, _ := Bound(db, b)
	uni, err := UniformSequences(bounded.Len(), bounded.Size, b.MaxLen, noise.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	opt := MetricOptions{Universe: g}
	self, err := Evaluate(real, real, opt)
	if err != nil {
		t.Fatal(err)
	}
	mu, err := Evaluate(real, uni, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bounds %+v: %d sequences", b, len(real))
	t.Logf("non-private: ARE %.3f trip %.3f length %.3f diameter %.3f F1 %.3f tau %.3f", self.QueryARE, self.TripJSD, self.LengthJSD, *self.DiameterJSD, self.PatternF1, self.KendallTau)
	t.Logf("uniform:     ARE %.3f trip %.3f length %.3f diameter %.3f F1 %.3f tau %.3f", mu.QueryARE, mu.TripJSD, mu.LengthJSD, *mu.DiameterJSD, mu.PatternF1, mu.KendallTau)
	if nb := self.NotBetter(mu); len(nb) != 0 {
		t.Errorf("the data is not better than uniform on %v", nb)
	}
	// Another sample of the same city (the other half of the persons)
	// beats uniform on every metric, by margins that tell them apart.
	var even, odd DB
	even.Size, odd.Size = bounded.Size, bounded.Size
	for i, u := range bounded.Users {
		if i%2 == 0 {
			even.Users = append(even.Users, u)
		} else {
			odd.Users = append(odd.Users, u)
		}
	}
	uniOdd, _ := UniformSequences(odd.Len(), odd.Size, b.MaxLen, noise.Seeded(2))
	half, err := Evaluate(even.Sequences(), odd.Sequences(), opt)
	if err != nil {
		t.Fatal(err)
	}
	halfU, _ := Evaluate(even.Sequences(), uniOdd, opt)
	t.Logf("half vs half: ARE %.3f trip %.3f length %.3f diameter %.3f F1 %.3f tau %.3f", half.QueryARE, half.TripJSD, half.LengthJSD, *half.DiameterJSD, half.PatternF1, half.KendallTau)
	t.Logf("uniform vs half: ARE %.3f trip %.3f length %.3f diameter %.3f F1 %.3f tau %.3f", halfU.QueryARE, halfU.TripJSD, halfU.LengthJSD, *halfU.DiameterJSD, halfU.PatternF1, halfU.KendallTau)
	if nb := half.NotBetter(halfU); len(nb) != 0 {
		t.Errorf("half of the persons is not better than uniform against the other half on %v", nb)
	}
	// Far worse: wide margins on every metric.
	if mu.QueryARE < 0.5 || mu.TripJSD < 0.9 || mu.LengthJSD < 0.1 || *mu.DiameterJSD < 0.5 || mu.PatternF1 > 0.05 || mu.KendallTau > 0.3 {
		t.Errorf("uniform baseline too close to the data: %+v", mu)
	}
}

func geolifeSeqsPerPerson(db *DB) map[string]int {
	m := map[string]int{}
	for _, u := range db.Users {
		m[u.ID] = len(u.Seqs)
	}
	return m
}

func geolifeMedian(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func geolifeMax(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

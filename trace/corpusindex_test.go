package trace

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func indexWalk(n int, lat, lon float64, at time.Time) *Trace {
	t := &Trace{UID: "w", Name: "walk"}
	for i := range n {
		t.Points = append(t.Points, Point{Time: at.Add(time.Duration(i) * 3 * time.Second), Lat: lat + 1.3e-4*float64(i), Lon: lon + 0.7e-4*float64(i), Alt: math.NaN()})
	}
	return t
}

// A fix matches one within a second and less than a grid step (about
// 1.1 m) in each coordinate, and never one 2 s or 3 grid steps away (the
// walk moves 15 m between fixes 3 s apart, so no neighbour is near).
func TestCorpusIndexTolerance(t *testing.T) {
	at := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	c := indexWalk(50, 39.98, 116.30, at)
	x := CorpusIndexOf(c)
	if x.Fixes != 50 || x.Shared(c) != 50 || !x.HasPerson("w") || x.HasPerson("v") || x.HasPerson("") {
		t.Fatalf("index of its own corpus: %d keys, %d shared", x.Fixes, x.Shared(c))
	}
	move := func(dt time.Duration, dlat, dlon float64) *Trace {
		out := &Trace{UID: "other"}
		for _, p := range c.Points {
			out.Points = append(out.Points, Point{Time: p.Time.Add(dt), Lat: p.Lat + dlat, Lon: p.Lon + dlon})
		}
		return out
	}
	for _, m := range []struct {
		name   string
		tr     *Trace
		shared bool
	}{
		{"1 s later", move(time.Second, 0, 0), true},
		{"0.9 s earlier", move(-900*time.Millisecond, 0, 0), true},
		{"0.9 grid step north-east", move(0, 0.9*FixGridDeg, 0.9*FixGridDeg), true},
		{"0.9 grid step south-west", move(0, -0.9*FixGridDeg, -0.9*FixGridDeg), true},
		{"re-rounded to 5 decimals", reround(c, 5), true},
		{"2 s later", move(2*time.Second, 0, 0), false},
		{"3 grid steps north", move(0, 3*FixGridDeg, 0), false},
		{"3 grid steps west", move(0, 0, -3*FixGridDeg), false},
	} {
		if got := x.Shared(m.tr); (got == m.tr.Len()) != m.shared || (got == 0) == m.shared {
			t.Errorf("%s: %d of %d fixes shared", m.name, got, m.tr.Len())
		}
	}
}

func reround(c *Trace, digits float64) *Trace {
	s := math.Pow(10, digits)
	out := &Trace{UID: c.UID}
	for _, p := range c.Points {
		out.Points = append(out.Points, Point{Time: p.Time, Lat: math.Round(p.Lat*s) / s, Lon: math.Round(p.Lon*s) / s})
	}
	return out
}

// The index round-trips through its file; keys of parts merge into the
// keys of the whole; a damaged file is refused, naming the field.
func TestCorpusIndexFile(t *testing.T) {
	at := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	a, b := indexWalk(30, 39.98, 116.30, at), indexWalk(40, 39.90, 116.40, at.Add(time.Hour))
	b.UID = "v"
	whole := CorpusIndexOf(a, b)
	if got := MergeFixHashes(FixHashes(a), FixHashes(b)); len(got) != whole.Fixes || NewCorpusIndex(got, []string{"w", "v", "w", ""}).FixKeys != whole.FixKeys {
		t.Errorf("merged parts: %d keys, want %d", len(got), whole.Fixes)
	}
	whole.Prior = "sha256:ab"
	var buf bytes.Buffer
	if err := whole.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "PRIVATE") {
		t.Error("the file does not say it is private")
	}
	back, err := ReadCorpusIndex(bytes.NewReader(buf.Bytes()))
	if err != nil || back.Shared(a) != 30 || back.Shared(b) != 40 || back.Prior != whole.Prior || len(back.Persons) != 2 {
		t.Fatalf("round trip: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"fixes": 70`, `"fixes": 69`, `"fixes"`},
		{`"version": 1`, `"version": 2`, `version`},
		{`"fix_keys": "`, `"fix_keys": "!`, `"fix_keys"`},
	} {
		bad := strings.Replace(buf.String(), c.from, c.to, 1)
		if _, err := ReadCorpusIndex(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.to, err, c.want)
		}
	}
}

// BenchmarkCorpusIndexShared checks a 10,000-fix trace against the index
// of a 100,000-fix corpus (27 probes per fix).
func BenchmarkCorpusIndexShared(b *testing.B) {
	at := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	x := CorpusIndexOf(indexWalk(100000, 39.98, 116.30, at))
	tr := indexWalk(10000, 39.90, 116.40, at)
	b.ResetTimer()
	for b.Loop() {
		if x.Shared(tr) != 0 {
			b.Fatal("shared")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e4, "ns/fix")
}

package sample

import (
	"bytes"
	"io/fs"
	"math"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample/synth"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// TestCorpusIsGenerated checks that the committed corpus is what the
// seeded generator writes (go generate ./internal/sample): the same files,
// the same timestamps, and positions and altitudes equal up to the last
// printed digit (1e-6 degrees, a foot), so that a platform whose floating
// point rounds one draw differently does not fail it. A hand-edited or
// stale file fails.
func TestCorpusIsGenerated(t *testing.T) {
	prior, err := prior.Read(bytes.NewReader(Prior))
	if err != nil {
		t.Fatal(err)
	}
	files, err := synth.Generate(prior, synth.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, f := range files {
		want = append(want, f.Path)
	}
	fs.WalkDir(Corpus, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, p)
		}
		return err
	})
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("committed files %v, generator writes %v: run go generate ./internal/sample", got, want)
	}
	for _, f := range files {
		b, err := Corpus.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReader(bytes.NewReader(b), trace.PLT, trace.ReadOptions{Name: f.Path, Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != f.Trace.Len() {
			t.Fatalf("%s: %d points committed, generator draws %d: run go generate ./internal/sample", f.Path, c.Len(), f.Trace.Len())
		}
		for i, p := range c.Points {
			q := f.Trace.Points[i]
			if !p.Time.Equal(q.Time) || math.Abs(p.Lat-q.Lat) > 1.01e-6 || math.Abs(p.Lon-q.Lon) > 1.01e-6 || math.Abs(p.Alt-q.Alt) > 0.31 {
				t.Fatalf("%s: point %d committed %+v, generator draws %+v: run go generate ./internal/sample", f.Path, i+1, p, q)
			}
		}
	}
	if !bytes.Equal(PLT, mustRead(t, Path)) {
		t.Errorf("PLT is not %s", Path)
	}
}

// TestCorpusShape checks what the package promises of the corpus: small,
// three people, fixes every 1 to 5 seconds, near the prior's public origin,
// and a stay of at least 15 minutes in the demo trace (the place the
// demo's certificate and the place attack are about).
func TestCorpusShape(t *testing.T) {
	prior, err := prior.Read(bytes.NewReader(Prior))
	if err != nil {
		t.Fatal(err)
	}
	o := prior.Origin
	size, people := 0, map[string]bool{}
	steps := map[float64]bool{}
	fs.WalkDir(Corpus, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b := mustRead(t, p)
		size += len(b)
		r, err := trace.NewReader(bytes.NewReader(b), trace.PLT, trace.ReadOptions{Name: p, Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		people[trace.UserDir(p)] = true
		ts, _ := gp.Seconds(tr.Times())
		med, _ := gp.MedianPeriod(ts)
		steps[med] = true
		if med < 1 || med > 5 {
			t.Errorf("%s: median interval %v s, want 1 to 5", p, med)
		}
		for _, pt := range tr.Points {
			if math.Abs(pt.Lat-o.Lat) > 0.1 || math.Abs(pt.Lon-o.Lon) > 0.1 {
				t.Fatalf("%s: %v, %v is not near the origin %v, %v", p, pt.Lat, pt.Lon, o.Lat, o.Lon)
			}
		}
		return nil
	})
	r, err := trace.NewReader(bytes.NewReader(PLT), trace.PLT, trace.ReadOptions{Name: Name})
	if err != nil {
		t.Fatal(err)
	}
	demo, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	stays, err := attack.Stays(demo.Points, attack.StayOptions{})
	if err != nil || len(stays) == 0 {
		t.Errorf("the demo trace has no stay of %v within %v m (err %v)", attack.DefaultStayMinDuration, attack.DefaultStayRadiusM, err)
	}
	if size > 1<<20 || len(people) != 3 || len(steps) != 3 {
		t.Errorf("corpus of %d bytes, people %v, median intervals %v: want under 1 MiB, 3 people, 3 loggers", size, people, steps)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := Corpus.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

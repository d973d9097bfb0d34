package sanitize

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// indexedPrior is familyPrior as version 4, fitted on a corpus with the
// private index x.
// and binds x to it.
func indexedPrior(x *trace.CorpusIndex) *prior.Prior {
	p := familyPrior()
	q := &prior.Prior{Version: prior.Version, Kernel: p.Kernel, Variance: p.Variance, Lengthscale: p.Lengthscale,
		FamilySet: &prior.FamilySet{Kernels: []prior.Family{{Kernel: p.Kernel, LengthscaleMin: p.LengthscaleMin, LengthscaleMax: p.LengthscaleMax}}},
		Origin:    p.Origin, Fit: &prior.FitRecord{Corpus: "c", CorpusIndexed: true}}
	x.Prior, _ = q.Digest()
	return q
}

func indexedOptions(x *trace.CorpusIndex) Options {
	o := options(indexedPrior(x))
	o.PriorCorpus = x
	return o
}

// through writes traces in format f with the library's writer and reads
// them back, as "tracepriv convert" does.
func through(t *testing.T, f trace.Format, traces ...*trace.Trace) []*trace.Trace {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Write(&buf, traces, f); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(&buf, f, trace.ReadOptions{UID: "copied", Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []*trace.Trace
	for {
		tr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
}

func retag(uid, name string, traces ...*trace.Trace) []*trace.Trace {
	for _, t := range traces {
		t.UID, t.Name = uid, name
	}
	return traces
}

func slice(t *trace.Trace, keep func(i int) bool) *trace.Trace {
	out := &trace.Trace{UID: t.UID, Name: t.Name}
	for i, p := range t.Points {
		if keep(i) {
			out.Points = append(out.Points, p)
		}
	}
	return out
}

// A trace sharing fixes with the prior's corpus is refused as self-fitted,
// however it was cut, renamed, re-folded or re-formatted; with
// AllowPriorOverlap it is released and none of its classes is covered. The
// negative controls (a shift of 5 m, an hour later, another walk) are
// released as independent. Every case but the last control was released
// as covered by the whole-trace fingerprints this check replaces.
func TestPriorOverlapByFixes(t *testing.T) {
	t.Parallel()
	corpus := walk(240, 39.98, 116.30)
	corpus.UID, corpus.Name = "alice", "2008/a.plt"
	x := trace.CorpusIndexOf(corpus)
	n := corpus.Len()
	later := func(tr *trace.Trace, d time.Duration, metres float64) *trace.Trace {
		out := &trace.Trace{UID: tr.UID, Name: tr.Name}
		for _, p := range tr.Points {
			q := geo.Destination(p.Geo(), 0, metres)
			out.Points = append(out.Points, trace.Point{Time: p.Time.Add(d), Lat: q.Lat, Lon: q.Lon, Alt: p.Alt})
		}
		return out
	}
	round := func(tr *trace.Trace, digits float64) *trace.Trace {
		out := later(tr, 0, 0)
		s := math.Pow(10, digits)
		for i := range out.Points {
			out.Points[i].Lat, out.Points[i].Lon = math.Round(out.Points[i].Lat*s)/s, math.Round(out.Points[i].Lon*s)/s
		}
		return out
	}
	other := walk(200, 39.90, 116.40)
	other.UID = "bob"
	// A walk a day later that begins with one of the corpus's fixes.
	oneShared := later(other, 24*time.Hour, 0)
	oneShared.Points = append([]trace.Point{corpus.Points[77]}, oneShared.Points...)
	half := n / 2
	cases := []struct {
		name   string
		traces []*trace.Trace
		shared bool
	}{
		{"one fix dropped", []*trace.Trace{slice(corpus, func(i int) bool { return i != 17 })}, true},
		{"one fix dropped, another uid and folder", retag("bob", "elsewhere/b.plt", slice(corpus, func(i int) bool { return i != 17 })), true},
		{"split in two files, given in reverse order", retag("carol", "x", slice(corpus, func(i int) bool { return i >= half }), slice(corpus, func(i int) bool { return i < half })), true},
		{"every other fix", []*trace.Trace{slice(corpus, func(i int) bool { return i%2 == 0 })}, true},
		{"the last ten fixes", []*trace.Trace{slice(corpus, func(i int) bool { return i >= n-10 })}, true},
		{"a superset", []*trace.Trace{later(corpus, 0, 0), later(corpus, 6*time.Hour, 0)}, true},
		{"re-formatted PLT then CSV", through(t, trace.CSV, through(t, trace.PLT, corpus)...), true},
		{"re-formatted GeoJSON", through(t, trace.GeoJSON, corpus), true},
		{"re-rounded to 5 decimals", []*trace.Trace{round(corpus, 5)}, true},
		{"one fix in common", []*trace.Trace{oneShared}, true},
		{"control: 5 m north", retag("dave", "d", later(corpus, 0, 5)), false},
		{"control: two seconds later", retag("dave", "d", later(corpus, 2*time.Second, 0)), false},
		{"control: another walk", []*trace.Trace{other}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, cert, err := Release(c.traces, indexedOptions(x))
			if !c.shared {
				if err != nil || cert.PriorCoverage != PriorIndependent || !cert.SecretClasses.Route.Covered {
					t.Fatalf("no fix shared: %v, coverage %q", err, cert.PriorCoverage)
				}
				return
			}
			var pe *param.Error
			if !errors.As(err, &pe) || pe.Name != "prior" || !strings.Contains(pe.Why, "fitted on data of the input") || !strings.Contains(pe.Why, "--allow-prior-overlap") {
				t.Fatalf("error %v, want a refusal naming the prior", err)
			}
			opt := indexedOptions(x)
			opt.AllowPriorOverlap = true
			_, cert, err = Release(c.traces, opt)
			if err != nil {
				t.Fatal(err)
			}
			checkUncovered(t, cert)
		})
	}
}

// checkUncovered checks a release of one person whose data the prior was
// fitted on: every class not covered, and no headline claims one.
func checkUncovered(t *testing.T, cert *Certificate) {
	t.Helper()
	for _, cs := range []SecretClasses{cert.SecretClasses, cert.Persons[0].SecretClasses} {
		for name, c := range map[string]ClassCertificate{"points": cs.Points, "places": cs.Places, "route": cs.Route} {
			if c.Covered || c.Epsilon != 0 || !strings.Contains(c.NotCovered, "fitted on data of this person") {
				t.Errorf("%s: %+v, want not covered", name, c)
			}
		}
	}
	if cert.PriorCoverage != PriorOverlapOverridden || cert.EpsilonMax != 0 || cert.Persons[0].EpsilonMax != 0 || cert.Meaning.BestGuessAccuracy != 0 ||
		!strings.HasPrefix(cert.Meaning.Text, "no guarantee") {
		t.Errorf("coverage %q, epsilon_max %v, meaning %+v", cert.PriorCoverage, cert.EpsilonMax, cert.Meaning)
	}
	if g := cert.Guarantee; !strings.Contains(g, "NOT COVERED") || strings.Contains(g, "epsilon_max =") {
		t.Errorf("guarantee claims an epsilon: %q", g)
	}
	if !strings.HasPrefix(cert.Persons[0].Explanation, "NOT COVERED") {
		t.Errorf("explanation %q", cert.Persons[0].Explanation)
	}
	if l := cert.Legend(); !strings.Contains(l, "NO GUARANTEE") || strings.Contains(l, "ε ≤") {
		t.Errorf("legend %q", l)
	}
}

// In a release of two persons, one of whom the prior was fitted on (allowed),
// only that person's classes are uncovered; the other keeps their
// guarantee, and the headline claims no class for the release.
func TestPriorOverlapOnePersonOfTwo(t *testing.T) {
	t.Parallel()
	corpus := walk(120, 39.98, 116.30)
	corpus.UID = "alice"
	x := trace.CorpusIndexOf(corpus)
	other := walk(120, 39.90, 116.40)
	other.UID = "bob"
	opt := indexedOptions(x)
	opt.AllowPriorOverlap = true
	_, cert, err := Release([]*trace.Trace{other, slice(corpus, func(i int) bool { return i > 0 })}, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range cert.Persons {
		if covered := pc.SecretClasses.Points.Covered && pc.SecretClasses.Places.Covered && pc.SecretClasses.Route.Covered; covered != (pc.UID == "bob") {
			t.Errorf("person %q: classes %+v", pc.UID, pc.SecretClasses)
		}
	}
	if cert.SecretClasses.Points.Covered || !strings.Contains(cert.Guarantee, `NOT COVERED`) || !strings.Contains(cert.Guarantee, `"alice"`) ||
		!strings.Contains(cert.Guarantee, "For each other person") || strings.Contains(cert.Legend(), "ε ≤") {
		t.Errorf("classes %+v, guarantee %q, legend %q", cert.SecretClasses, cert.Guarantee, cert.Legend())
	}
}

// A streamed CSV release checks every chunk's fixes in its first pass.
func TestPriorOverlapStream(t *testing.T) {
	t.Parallel()
	corpus := walk(200, 39.98, 116.30)
	corpus.UID = "alice"
	x := trace.CorpusIndexOf(corpus)
	var buf bytes.Buffer
	if err := trace.Write(&buf, []*trace.Trace{slice(corpus, func(i int) bool { return i%3 != 0 })}, trace.CSV); err != nil {
		t.Fatal(err)
	}
	open := func() (trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(buf.Bytes()), trace.CSV, trace.ReadOptions{Chunk: 50})
	}
	opt := indexedOptions(x)
	opt.Path = PathLinear
	_, _, err := NewStream(open, opt)
	var pe *param.Error
	if !errors.As(err, &pe) || pe.Name != "prior" {
		t.Fatalf("stream of a corpus trace: %v, want a refusal", err)
	}
	opt.AllowPriorOverlap = true
	_, cert, err := NewStream(open, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkUncovered(t, cert)
}

// The index must be the prior's; a version 4 prior without its index says
// it could not check; an old prior's fingerprints are still checked.
func TestPriorCorpusIndexUse(t *testing.T) {
	t.Parallel()
	corpus := walk(60, 39.98, 116.30)
	x := trace.CorpusIndexOf(corpus)
	stranger := trace.CorpusIndexOf(walk(60, 39.90, 116.40))
	stranger.Prior = "sha256:00"
	opt := indexedOptions(x)
	opt.PriorCorpus = stranger
	if _, _, err := Trace(walk(60, 39.70, 116.40), opt); err == nil || !strings.Contains(err.Error(), "is not this prior's") {
		t.Errorf("another prior's index: %v", err)
	}
	opt.PriorCorpus = nil
	if _, cert, err := Trace(corpus, opt); err != nil || cert.PriorCoverage != PriorIndexMissing {
		t.Errorf("no index: %v, coverage %q", err, cert.PriorCoverage)
	}
	old := familyPrior()
	old.Fit = &prior.FitRecord{Corpus: "c", Fingerprints: []string{trace.Fingerprint(corpus)}}
	if _, _, err := Trace(corpus, options(old)); err == nil || !strings.Contains(err.Error(), "fitted on data of the input") {
		t.Errorf("version 2 prior with the trace's fingerprint: %v", err)
	}
	// The index's person ids: the same id with no fix in common is
	// stated, not refused.
	renamed := walk(60, 39.70, 116.40)
	renamed.UID = corpus.UID
	if _, cert, err := Trace(renamed, indexedOptions(x)); err != nil || !strings.Contains(cert.PriorCoverage, "the same person") || !cert.SecretClasses.Route.Covered {
		t.Errorf("same id, no fix in common: %v, %q", err, cert.PriorCoverage)
	}
	// Nothing of the index reaches the certificate.
	_, cert, err := Trace(walk(60, 39.70, 116.40), indexedOptions(x))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCertificate(&b, cert); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), x.FixKeys) || strings.Contains(b.String(), "fix_keys") {
		t.Error("the certificate carries the corpus index")
	}
}

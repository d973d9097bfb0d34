package sanitize

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// certBytes is c as WriteCertificate writes it, with Seconds (the time
// taken, the one field that is not a function of the inputs) zeroed.
func certBytes(t *testing.T, c *Certificate) []byte {
	t.Helper()
	saved := c.Seconds
	defer func() { c.Seconds = saved }()
	c.Seconds = 0
	var b bytes.Buffer
	if err := WriteCertificate(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// split cuts tr into k traces of one person, consecutive in time.
func split(tr *trace.Trace, k int) []*trace.Trace {
	var out []*trace.Trace
	n := tr.Len()
	for i := range k {
		part := &trace.Trace{UID: tr.UID, Name: tr.Name + "-" + string(rune('a'+i)), Points: tr.Points[i*n/k : (i+1)*n/k]}
		out = append(out, part)
	}
	return out
}

// sameTraces reports the first point where a and b differ, bit for bit.
func sameTraces(t *testing.T, a, b []*trace.Trace) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d traces vs %d", len(a), len(b))
	}
	for i := range a {
		if a[i].UID != b[i].UID || a[i].Name != b[i].Name || a[i].Len() != b[i].Len() {
			t.Fatalf("trace %d: %q %q %d vs %q %q %d", i, a[i].UID, a[i].Name, a[i].Len(), b[i].UID, b[i].Name, b[i].Len())
		}
		for j, p := range a[i].Points {
			q := b[i].Points[j]
			if !p.Time.Equal(q.Time) || math.Float64bits(p.Lat) != math.Float64bits(q.Lat) || math.Float64bits(p.Lon) != math.Float64bits(q.Lon) {
				t.Fatalf("trace %d point %d: %v vs %v", i, j, p, q)
			}
		}
	}
}

// TestPreparedDrawIsRelease checks that certifying first and drawing later
// is Release: on the dense and the linear path, for one trace and for
// three traces of one person, Prepare's certificate (known before the
// draw, from the public part alone) has the bytes of Release's, and Draw
// releases the very points ReleaseSeeded does. Prepare's certificate is
// also the one of a release of other coordinates at the same times (it
// reads none), and the draw differs from a draw of another seed (the
// comparison can fail).
func TestPreparedDrawIsRelease(t *testing.T) {
	t.Parallel()
	for _, path := range []Path{PathDense, PathLinear} {
		for _, k := range []int{1, 3} {
			tr := walk(90, 39.98, 116.30)
			traces := split(tr, k)
			opt := options(familyPrior())
			opt.Path = path
			ref, refCert, err := Release(traces, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Source = noise.Seeded(7)
			p, err := Prepare(context.Background(), PublicOf(traces), opt)
			if err != nil {
				t.Fatal(err)
			}
			planned := certBytes(t, p.Certificate())
			if want := certBytes(t, refCert); !bytes.Equal(planned, want) {
				t.Fatalf("%s, %d traces: the prepared certificate differs from Release's:\n%s\nvs\n%s", path, k, planned, want)
			}
			outs, cert, err := p.Draw(context.Background(), traces)
			if err != nil {
				t.Fatal(err)
			}
			if cert != p.Certificate() || !bytes.Equal(certBytes(t, cert), planned) {
				t.Errorf("%s, %d traces: the draw changed the certificate", path, k)
			}
			sameTraces(t, outs, ref)
			if cert.Path != path || len(cert.Persons) != 1 || len(cert.Persons[0].Traces) != k || !(cert.Persons[0].SamplingJitter > 0) {
				t.Errorf("%s, %d traces: certificate path %s, %d persons, sampling jitter %v", path, k, cert.Path, len(cert.Persons), cert.Persons[0].SamplingJitter)
			}

			// Other coordinates at the same times: the same certificate.
			far := walk(90, -33.9, 151.2)
			opt.Source = noise.Seeded(7)
			_, farCert, err := Release(split(far, k), opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(certBytes(t, farCert), planned) {
				t.Errorf("%s, %d traces: a release elsewhere at the same times has another certificate", path, k)
			}
			// The negative control: another seed draws other points.
			opt.Source = noise.Seeded(8)
			q, err := Prepare(context.Background(), PublicOf(traces), opt)
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := q.Draw(context.Background(), traces)
			if err != nil {
				t.Fatal(err)
			}
			if other[0].Points[0].Lat == outs[0].Points[0].Lat {
				t.Errorf("%s, %d traces: seeds 7 and 8 drew the same first point", path, k)
			}
		}
	}
}

// TestPreparedSeveralPersons: a prepared release of two people is
// Release's, person by person.
func TestPreparedSeveralPersons(t *testing.T) {
	t.Parallel()
	a, b := walk(40, 39.98, 116.30), walk(50, 39.90, 116.40)
	b.UID, b.Name = "v", "other"
	traces := []*trace.Trace{a, b}
	opt := options(familyPrior())
	ref, refCert, err := Release(traces, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Source = noise.Seeded(7)
	p, err := Prepare(context.Background(), PublicOf(traces), opt)
	if err != nil {
		t.Fatal(err)
	}
	outs, cert, err := p.Draw(context.Background(), traces)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(certBytes(t, cert), certBytes(t, refCert)) || len(cert.Persons) != 2 {
		t.Errorf("two persons: the prepared certificate differs from Release's")
	}
	sameTraces(t, outs, ref)
}

// TestDrawRefusesOtherTraces checks that a prepared release draws only the
// traces it was prepared for: another count, uid, name, length or a
// timestamp moved by a nanosecond (or put in another zone) is refused with
// ErrNotPrepared and draws nothing; the prepared traces then draw (the
// negative control), once: a second draw is ErrDrawn.
func TestDrawRefusesOtherTraces(t *testing.T) {
	t.Parallel()
	traces := split(walk(60, 39.98, 116.30), 2)
	opt := options(familyPrior())
	p, err := Prepare(context.Background(), PublicOf(traces), opt)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() []*trace.Trace {
		var out []*trace.Trace
		for _, t := range traces {
			c := *t
			c.Points = append([]trace.Point(nil), t.Points...)
			out = append(out, &c)
		}
		return out
	}
	cases := map[string]func(ts []*trace.Trace) []*trace.Trace{
		"one trace fewer": func(ts []*trace.Trace) []*trace.Trace { return ts[:1] },
		"another uid":     func(ts []*trace.Trace) []*trace.Trace { ts[1].UID = "w"; return ts },
		"another name":    func(ts []*trace.Trace) []*trace.Trace { ts[0].Name = "x"; return ts },
		"a point fewer":   func(ts []*trace.Trace) []*trace.Trace { ts[1].Points = ts[1].Points[1:]; return ts },
		"a time 1 ns later": func(ts []*trace.Trace) []*trace.Trace {
			ts[1].Points[7].Time = ts[1].Points[7].Time.Add(time.Nanosecond)
			return ts
		},
		"a time in another zone": func(ts []*trace.Trace) []*trace.Trace {
			ts[0].Points[3].Time = ts[0].Points[3].Time.In(time.FixedZone("CST", 8*3600))
			return ts
		},
	}
	for name, edit := range cases {
		outs, cert, err := p.Draw(context.Background(), edit(clone()))
		if !errors.Is(err, ErrNotPrepared) || outs != nil || cert != nil {
			t.Errorf("%s: %v (%d traces out)", name, err, len(outs))
		}
	}
	// Coordinates are not public: moved ones draw (the negative control).
	moved := clone()
	moved[0].Points[0].Lat += 0.01
	if _, _, err := p.Draw(context.Background(), moved); err != nil {
		t.Fatalf("the prepared traces, one coordinate moved: %v", err)
	}
	if outs, _, err := p.Draw(context.Background(), traces); !errors.Is(err, ErrDrawn) || outs != nil {
		t.Errorf("a second draw: %v", err)
	}
}

// TestPreparedPriorOverlap: Prepare cannot see the coordinates the
// overlap check needs, so a draw of traces the prior's corpus holds is
// refused (Release refuses them too), and traces elsewhere draw (the
// negative control), with Release's certificate.
func TestPreparedPriorOverlap(t *testing.T) {
	t.Parallel()
	corpus := walk(60, 39.98, 116.30)
	corpus.UID, corpus.Name = "alice", "a.plt"
	opt := indexedOptions(trace.CorpusIndexOf(corpus))
	p, err := Prepare(context.Background(), PublicOf([]*trace.Trace{corpus}), opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Release([]*trace.Trace{corpus}, opt); err == nil {
		t.Fatal("Release released a trace of the prior's corpus")
	}
	if outs, _, err := p.Draw(context.Background(), []*trace.Trace{corpus}); err == nil || outs != nil {
		t.Errorf("a prepared draw of a trace of the prior's corpus: %v", err)
	}
	// The same times 5 km away: not in the corpus.
	away := &trace.Trace{UID: corpus.UID, Name: corpus.Name}
	for _, q := range corpus.Points {
		g := geo.Destination(q.Geo(), 0, 5000)
		away.Points = append(away.Points, trace.Point{Time: q.Time, Lat: g.Lat, Lon: g.Lon})
	}
	_, refCert, err := Release([]*trace.Trace{away}, opt)
	if err != nil {
		t.Fatal(err)
	}
	_, cert, err := p.Draw(context.Background(), []*trace.Trace{away})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(certBytes(t, cert), certBytes(t, refCert)) {
		t.Errorf("coverage %q, Release's %q: the certificates differ", cert.PriorCoverage, refCert.PriorCoverage)
	}
}

// TestPrepareContext: a context that ended stops Prepare and Draw with its
// error, and a draw refused by it can be retried.
func TestPrepareContext(t *testing.T) {
	t.Parallel()
	traces := []*trace.Trace{walk(30, 39.98, 116.30)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt := options(familyPrior())
	if p, err := Prepare(ctx, PublicOf(traces), opt); !errors.Is(err, context.Canceled) || p != nil {
		t.Fatalf("Prepare with a cancelled context: %v", err)
	}
	p, err := Prepare(context.Background(), PublicOf(traces), opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Draw(ctx, traces); !errors.Is(err, context.Canceled) {
		t.Fatalf("Draw with a cancelled context: %v", err)
	}
	if _, _, err := p.Draw(context.Background(), traces); err != nil {
		t.Errorf("a draw after one refused before drawing: %v", err)
	}
}

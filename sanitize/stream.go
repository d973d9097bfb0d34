package sanitize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// ErrNotStreamable is returned by NewStream for an input it cannot stream:
// a person whose rows are not contiguous, listed secrets, or a design with
// no state-space form. Read the input into memory and call Release.
var ErrNotStreamable = errors.New("the input cannot be streamed")

// Stream is a release that reads its input twice and holds one chunk of
// points at a time (plus 8 bytes of public timestamp per point): the first
// pass (NewStream) reads only timestamps, designs and certifies every
// person and draws nothing; the second (WriteTo) reads the points again,
// chunk by chunk, adds each person's noise by the linear path's recursion
// and writes the release. It gives the same release as Release would for
// the same input and seed.
type Stream struct {
	open    func() (trace.Reader, error)
	d       *designer
	cert    *Certificate
	runs    []*streamRun
	read    *trace.Report
	written bool
}

// streamRun is one person: a run of consecutive chunks with one uid.
type streamRun struct {
	uid    string
	ts     []float64 // seconds from the first point
	nano   []int64   // the timestamps, for the certificate
	chunks int
	mr     *noise.MarkovRelease
	pos    int
}

// NewStream makes the first pass over the traces open returns (each call a
// fresh reader of the same input, whose ReadOptions.Chunk bounds the
// points held at once) and returns the stream and its certificate, which
// is complete before anything is released. Every point is a basic secret.
func NewStream(open func() (trace.Reader, error), opt Options) (*Stream, *Certificate, error) {
	start := time.Now()
	if opt.Secrets != nil {
		return nil, nil, fmt.Errorf("%w: listed secrets", ErrNotStreamable)
	}
	if err := opt.check(); err != nil {
		return nil, nil, err
	}
	if opt.Path == PathDense {
		return nil, nil, fmt.Errorf("%w: the dense path", ErrNotStreamable)
	}
	step := func(string) {}
	// A stream has no bound on the points of a person: prepare as for a
	// person too large for the dense path, so that auto takes the linear one.
	d, cert, err := prepare(context.Background(), opt, math.MaxInt, step)
	if err != nil {
		return nil, nil, err
	}
	if !d.linear || d.env == nil {
		return nil, nil, fmt.Errorf("%w: the %s design has no state-space form", ErrNotStreamable, d.kind)
	}
	s := &Stream{open: open, d: d, cert: cert}
	r, err := open()
	if err != nil {
		return nil, nil, err
	}
	// The overlap check reads each chunk's fixes in this first pass.
	pc, err := newPriorCheck(opt)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var cur *streamRun
	var t0 time.Time
	var infos [][]TraceInfo
	for {
		t, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if t.Len() == 0 {
			continue
		}
		if cur == nil || t.UID != cur.uid {
			if seen[t.UID] {
				return nil, nil, fmt.Errorf("%w: the rows of person %q are not contiguous", ErrNotStreamable, t.UID)
			}
			seen[t.UID] = true
			cur = &streamRun{uid: t.UID}
			s.runs = append(s.runs, cur)
			infos = append(infos, []TraceInfo{{Index: len(s.runs) - 1, Name: baseName(t.Name), Start: t.Points[0].Time}})
			t0 = t.Points[0].Time
		}
		cur.chunks++
		pc.add(fmt.Sprintf("person %q", t.UID), t.UID, t, false)
		info := &infos[len(infos)-1][0]
		for _, p := range t.Points {
			cur.ts = append(cur.ts, p.Time.Sub(t0).Seconds())
			cur.nano = append(cur.nano, p.Time.UnixNano())
		}
		info.Points += t.Len()
		info.End = t.Points[t.Len()-1].Time
	}
	s.read = r.Report()
	if len(s.runs) == 0 {
		return nil, nil, errors.New("no trace")
	}
	ids := make([]string, len(s.runs))
	for i, run := range s.runs {
		ids[i] = run.uid
	}
	if cert.PriorCoverage, d.overlap, err = pc.verdict(opt, ids); err != nil {
		return nil, nil, err
	}
	cert.Guarantee = guarantee(cert)
	for k, run := range s.runs {
		times := make([]time.Time, len(run.nano))
		for i, v := range run.nano {
			times[i] = time.Unix(0, v).In(time.UTC)
		}
		pc, nd, ts, err := d.certify(run.uid, times, infos[k], cip.EveryPoint(len(times)), step)
		if err != nil {
			return nil, nil, fmt.Errorf("person %q: %w", run.uid, err)
		}
		run.ts, run.nano = ts, nil
		if run.mr, err = d.markov(nd, ts, noise.Derive(opt.Source, run.uid)); err != nil {
			return nil, nil, fmt.Errorf("noise: %w", err)
		}
		pc.SamplingJitter = run.mr.Eta()
		cert.add(pc)
	}
	cert.RecordInput(s.read)
	if err := cert.finish(start); err != nil {
		return nil, nil, err
	}
	return s, cert, nil
}

// Report is what the first pass read: rows skipped or merged.
func (s *Stream) Report() *trace.Report { return s.read }

// WriteTo makes the second pass: it reads the input again and writes the
// release to w in format f, chunk by chunk. It can be called once.
func (s *Stream) WriteTo(w io.Writer, f trace.Format) error {
	if s.written {
		return errors.New("a stream is released once")
	}
	s.written = true
	r, err := s.open()
	if err != nil {
		return err
	}
	tw, err := trace.NewWriter(w, f)
	if err != nil {
		return err
	}
	k := -1
	var run *streamRun
	for {
		t, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if t.Len() == 0 {
			continue
		}
		if run == nil || t.UID != run.uid {
			k++
			if k >= len(s.runs) || s.runs[k].uid != t.UID {
				return errors.New("the input changed between the two passes")
			}
			run = s.runs[k]
		}
		n := t.Len()
		if run.pos+n > len(run.ts) {
			return errors.New("the input changed between the two passes")
		}
		xs := toECEF(n, func(i int) geo.Point { return t.Points[i].Geo() })
		if err := run.mr.Release(xs[:], xs[:], run.ts[run.pos:run.pos+n]); err != nil {
			return fmt.Errorf("noise: %w", err)
		}
		run.pos += n
		out := &trace.Trace{UID: t.UID, Name: t.Name, Points: make([]trace.Point, n)}
		for i, p := range t.Points {
			q, err := fromECEF(xs, i)
			if err != nil {
				return err
			}
			out.Points[i] = trace.Point{Time: p.Time, Lat: q.Lat, Lon: q.Lon, Alt: math.NaN()}
		}
		if err := tw.Write(out); err != nil {
			return err
		}
	}
	for _, run := range s.runs {
		if run.pos != len(run.ts) {
			return errors.New("the input changed between the two passes")
		}
	}
	return tw.Close()
}

// markov builds the linear path's sampler of a person's noise.
func (d *designer) markov(nd *PersonDesign, ts []float64, src noise.Source) (*noise.MarkovRelease, error) {
	comps := make([]noise.StateSpace, len(d.env.Components))
	for i, k := range d.env.Components {
		m, err := gp.StateSpace(k)
		if err != nil {
			return nil, err
		}
		comps[i] = m
	}
	if nd.RouteVar > 0 {
		// The route component, in units of alpha like the envelope's.
		rm, err := gp.StateSpace(gp.Matern12{Variance: nd.RouteVar / nd.Alpha, Lengthscale: cip.RouteLengthscale})
		if err != nil {
			return nil, err
		}
		comps = append(comps, rm)
	}
	return noise.NewMarkovRelease(comps, nd.Alpha, noise.MarkovOptions{Times: ts, Dims: Dims, Grid: OutputGrid, Source: src, Workers: d.opt.Workers, Context: d.ctx})
}

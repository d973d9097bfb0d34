package sanitize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/trace"
)

// Certify first, draw later (issue 33). A release's certificate depends on
// public inputs only: the options (with the prior and the randomness
// source), each trace's uid, name and timestamps. Prepare designs the
// noise from them, certifies it and sets up its sampling without a
// coordinate in sight; Prepared.Draw then reads the coordinates and draws
// once from that same design. A device charges the certificate's digest
// between the two (device.PlanRelease), so it is charged for exactly the
// certificate the release carries, before anything is drawn.

// PublicTrace is the public part of a trace, all that Prepare reads: the
// person (uid), the trace's name and its timestamps, in the trace's order.
type PublicTrace struct {
	UID   string
	Name  string
	Times []time.Time
}

// PublicOf returns the public part of traces, for Prepare.
func PublicOf(traces []*trace.Trace) []PublicTrace {
	out := make([]PublicTrace, len(traces))
	for i, t := range traces {
		times := make([]time.Time, t.Len())
		for j, p := range t.Points {
			times[j] = p.Time
		}
		out[i] = PublicTrace{UID: t.UID, Name: t.Name, Times: times}
	}
	return out
}

// ErrDrawn means a prepared release was drawn before: it draws once (its
// certificate covers one release; prepare again for another).
var ErrDrawn = errors.New("sanitize: this prepared release was already drawn; prepare it again for another release")

// ErrNotPrepared means the traces given to Prepared.Draw are not the ones
// prepared: their uid, name, number of points or a timestamp differs (the
// certificate would not be theirs), or, with Options.PriorCorpus, the
// prior's corpus shares data with them. Nothing is drawn.
var ErrNotPrepared = errors.New("sanitize: the traces are not the ones prepared")

// Prepared is a release designed and certified from public inputs, not
// yet drawn. It is safe for concurrent use; it draws once.
type Prepared struct {
	s      *setup
	opt    Options // checked
	public []PublicTrace
	draws  []*personDraw // per person of s.persons
	mu     sync.Mutex
	drawn  bool
}

// Prepare designs and certifies the release Release would make of traces
// with the public part public (PublicOf) and options opt, reading no
// coordinate: Certificate is the release's certificate, the same as
// Release's for the same traces and options but for Seconds (here the time
// Prepare took), and Draw releases the traces from this design with
// opt.Source, exactly as Release would have drawn them (a seeded source
// gives the same bytes).
//
// Unlike Release, Prepare holds every person's noise design until the
// draw (for the dense path, a Cholesky factor of n² / 2 numbers for a
// person of n points). With Options.PriorCorpus, the overlap check needs
// the coordinates: Prepare certifies the input as not in the prior's
// corpus, and Draw refuses traces it finds there (ErrNotPrepared).
// Prepare stops when ctx ends, as ReleaseContext does.
func Prepare(ctx context.Context, public []PublicTrace, opt Options) (*Prepared, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := prepareRelease(ctx, public, opt)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	return p, err
}

func prepareRelease(ctx context.Context, public []PublicTrace, opt Options) (*Prepared, error) {
	start := time.Now()
	stand := make([]*trace.Trace, len(public))
	kept := make([]PublicTrace, len(public))
	for i, pt := range public {
		// A stand-in with the public part only: grouping, secrets and the
		// design read times, and no coordinate exists to be read.
		pts := make([]trace.Point, len(pt.Times))
		for j, tm := range pt.Times {
			pts[j] = trace.Point{Time: tm}
		}
		stand[i] = &trace.Trace{UID: pt.UID, Name: pt.Name, Points: pts}
		kept[i] = PublicTrace{UID: pt.UID, Name: pt.Name, Times: slices.Clone(pt.Times)}
	}
	s, err := begin(ctx, stand, &opt)
	if err != nil {
		return nil, err
	}
	// The overlap check's verdict before any coordinate: no fix shared
	// (Draw checks the coordinates and refuses if one is).
	c, err := newPriorCheck(opt)
	if err != nil {
		return nil, err
	}
	if s.cert.PriorCoverage, s.d.overlap, err = c.verdict(opt, s.ids()); err != nil {
		return nil, err
	}
	s.cert.Guarantee = guarantee(s.cert)
	p := &Prepared{s: s, opt: opt, public: kept}
	for _, ps := range s.persons {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pd, err := s.d.plan(ps, stand, s.step)
		if err != nil {
			return nil, s.personError(ps, err)
		}
		s.cert.add(pd.pc)
		p.draws = append(p.draws, pd)
	}
	if err := s.cert.finish(start); err != nil {
		return nil, err
	}
	return p, nil
}

// Certificate is the certificate of the prepared release: the one Draw's
// release carries (the same value Draw returns).
func (p *Prepared) Certificate() *Certificate { return p.s.cert }

// EnvelopeDesign is the prepared release's noise envelope as data
// (cip.Envelope.Design): it depends on the prior family and the path
// alone, so a device keeps it and gives it back to cip.UseEnvelope before
// its next release, which then skips the envelope's linear program. Nil
// when the release has none to keep (a proportional or E3 design).
func (p *Prepared) EnvelopeDesign() *cip.EnvelopeDesign {
	if p.s.d.env == nil {
		return nil
	}
	return p.s.d.env.Design(&p.s.d.envOpt)
}

// Draw releases traces, which must be the prepared ones (their
// PublicOf equal to what Prepare was given; otherwise ErrNotPrepared and
// nothing is drawn), with the prepared design and the options' source.
// It returns the released traces, in input order, and the prepared
// certificate. It draws once: a second Draw returns ErrDrawn, as does one
// after a Draw that failed once noise was drawn. It stops when ctx ends,
// returning ctx's error and nothing else.
func (p *Prepared) Draw(ctx context.Context, traces []*trace.Trace) ([]*trace.Trace, *Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		return nil, nil, ErrDrawn
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := p.matches(traces); err != nil {
		return nil, nil, err
	}
	persons, err := group(traces)
	if err != nil {
		return nil, nil, err
	}
	cov, over, err := checkPrior(p.opt, p.s.ids(), traces)
	if err != nil {
		return nil, nil, err
	}
	if cov != p.s.cert.PriorCoverage || len(over) > 0 {
		return nil, nil, fmt.Errorf("%w: the prior's corpus shares data with them, so their certificate would say %q, not the prepared %q; release them with Release", ErrNotPrepared, cov, p.s.cert.PriorCoverage)
	}
	p.drawn = true
	d := *p.s.d
	d.ctx = ctx
	outs := newOutputs(traces)
	for i, ps := range persons {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := d.draw(p.draws[i], ps, outs); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			return nil, nil, p.s.personError(ps, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return outs, p.s.cert, nil
}

// matches refuses traces whose public part is not the prepared one.
func (p *Prepared) matches(traces []*trace.Trace) error {
	if len(traces) != len(p.public) {
		return fmt.Errorf("%w: %d traces given, %d prepared", ErrNotPrepared, len(traces), len(p.public))
	}
	for i, t := range traces {
		want := p.public[i]
		at := fmt.Sprintf("trace %d (%s)", i+1, baseName(t.Name))
		switch {
		case t.UID != want.UID:
			return fmt.Errorf("%w: %s is of person %q, prepared for %q", ErrNotPrepared, at, t.UID, want.UID)
		case t.Name != want.Name:
			return fmt.Errorf("%w: %s was prepared as %q", ErrNotPrepared, at, want.Name)
		case t.Len() != len(want.Times):
			return fmt.Errorf("%w: %s has %d points, prepared with %d", ErrNotPrepared, at, t.Len(), len(want.Times))
		}
		for j, q := range t.Points {
			// The same instant in the same zone: the certificate writes the
			// timestamps with their offset.
			_, a := q.Time.Zone()
			_, b := want.Times[j].Zone()
			if !q.Time.Equal(want.Times[j]) || a != b {
				return fmt.Errorf("%w: %s point %d is at %s, prepared at %s", ErrNotPrepared, at, j+1,
					q.Time.Format(time.RFC3339Nano), want.Times[j].Format(time.RFC3339Nano))
			}
		}
	}
	return nil
}

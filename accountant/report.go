package accountant

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// Report is the composed guarantee of an event log, from every accountant that
// applies. All reported values are valid upper bounds; Epsilon and Delta
// are the best of them.
type Report struct {
	Version int         `json:"version"`
	Runs    int         `json:"runs"`             // mechanism runs, counts included
	Query   string      `json:"query"`            // "epsilon" (ε at a given δ) or "delta" (δ at a given ε)
	Epsilon float64     `json:"epsilon"`          // best ε (the given ε for a delta query)
	Delta   float64     `json:"delta"`            // best δ (the given δ for an epsilon query)
	Method  string      `json:"method,omitempty"` // accountant giving the best bound
	RDP     *RDPResult  `json:"rdp,omitempty"`
	ZCDP    *ZCDPResult `json:"zcdp,omitempty"`
	GDP     *GDPResult  `json:"gdp,omitempty"`
	// Approx is the basic composition (Σε, Σδ) of the (ε, δ>0) events,
	// which have no Rényi curve; it is added to the RDP and zCDP results.
	Approx *ApproxResult `json:"approx,omitempty"`
	// Metric is the sequential composition of the metric-privacy events,
	// reported separately: it bounds the loss per unit of distance between
	// inputs, not per neighbouring dataset.
	Metric *Metric `json:"metric,omitempty"`
}

// ApproxResult is the basic composition of the (ε, δ > 0) events.
type ApproxResult struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// RDPResult is the RDP accountant's answer.
type RDPResult struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Order   float64 `json:"order"` // optimal Rényi order (0 when the KL bound won)
}

// ZCDPResult is the exact zCDP composition, given when every event is zCDP.
type ZCDPResult struct {
	Rho     float64 `json:"rho"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// GDPResult is the exact Gaussian-DP composition, given when every event is
// a Gaussian mechanism; it is tight for such compositions.
type GDPResult struct {
	Mu      float64 `json:"mu"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

type flatEvent struct {
	ev    Event
	count int
}

// flatten expands composites into leaf events with multiplicities.
func flatten(ev Event, mult int, out []flatEvent) []flatEvent {
	switch e := ev.(type) {
	case SelfComposed:
		return flatten(e.Event, mult*e.Count, out)
	case Composed:
		for _, inner := range e.Events {
			out = flatten(inner, mult, out)
		}
		return out
	}
	return append(out, flatEvent{ev, mult})
}

// EpsilonAt composes the event log and reports the smallest ε for which it is
// (ε, delta)-DP.
func (l *EventLog) EpsilonAt(delta float64) (*Report, error) {
	if err := param.InOpen("delta", delta, 0, 1); err != nil {
		return nil, err
	}
	return l.account(true, delta)
}

// DeltaAt composes the event log and reports the smallest δ for which it is
// (eps, δ)-DP.
func (l *EventLog) DeltaAt(eps float64) (*Report, error) {
	if err := param.NonNegative("epsilon", eps); err != nil {
		return nil, err
	}
	return l.account(false, eps)
}

// account composes the event log's events (tally) and converts the result to
// the smallest ε at δ = target (byDelta) or the smallest δ at ε = target.
func (l *EventLog) account(byDelta bool, target float64) (*Report, error) {
	all, err := l.Event()
	if err != nil {
		return nil, err
	}
	rep := &Report{Version: EventLogVersion, Query: "delta"}
	if byDelta {
		rep.Query = "epsilon"
	}
	t, err := tallyEvents(flatten(all, 1, nil), rep)
	if err != nil {
		return nil, err
	}
	if !t.anyDP {
		// Only metric events: no (ε, δ) statement about neighbouring
		// datasets is made.
		if byDelta {
			rep.Delta = target
		} else {
			rep.Epsilon = target
		}
		return rep, nil
	}
	if byDelta {
		return t.epsilonAt(rep, target)
	}
	return t.deltaAt(rep, target)
}

// tally is the composition of a ledger's leaf events: approximate (ε, δ)
// events add up, the others go to the Rényi accountant, and zCDP and GDP
// are tracked while every event admits them.
type tally struct {
	rdp                  *RDPAccountant
	approx               ApproxResult
	rho                  float64
	mus                  []float64
	allZCDP, allGaussian bool
	anyDP                bool
}

// tallyEvents composes the leaf events, counting runs and setting the
// report's Metric and Approx.
func tallyEvents(flat []flatEvent, rep *Report) (*tally, error) {
	rdpAcc, err := NewRDPAccountant(nil)
	if err != nil {
		return nil, err
	}
	t := &tally{rdp: rdpAcc, allZCDP: true, allGaussian: true}
	var metric Metric
	hasMetric, hasApprox := false, false
	for _, fe := range flat {
		rep.Runs += fe.count
		if fe.count == 0 {
			continue
		}
		switch e := fe.ev.(type) {
		case MetricEvent:
			m, err := e.Of()
			if err != nil {
				return nil, err
			}
			metric = metric.Plus(m.Scale(float64(fe.count)))
			hasMetric = true
			continue
		case EpsilonDelta:
			if e.Delta > 0 {
				t.approx.Epsilon += float64(fe.count) * e.Epsilon
				t.approx.Delta += float64(fe.count) * e.Delta
				hasApprox = true
				t.allGaussian = false
				t.allZCDP = false
				t.anyDP = true
				continue
			}
		}
		t.anyDP = true
		if err := t.rdp.Compose(fe.ev, fe.count); err != nil {
			return nil, err
		}
		if g, ok := fe.ev.(Gaussian); ok {
			t.mus = append(t.mus, g.Mu()*math.Sqrt(float64(fe.count)))
		} else {
			t.allGaussian = false
		}
		if r, ok := exactRho(fe.ev); ok {
			t.rho += float64(fe.count) * r
		} else {
			t.allZCDP = false
		}
	}
	if hasMetric {
		rep.Metric = &metric
	}
	if hasApprox {
		approx := t.approx
		rep.Approx = &approx
	}
	return t, nil
}

// epsilonAt sets the report's smallest ε at δ = target over the Rényi,
// zCDP and GDP conversions.
func (t *tally) epsilonAt(rep *Report, target float64) (*Report, error) {
	best := math.Inf(1)
	consider := func(v float64, method string) {
		if v < best {
			best, rep.Method = v, method
		}
	}
	rep.Delta = target
	// The approximate events' δ is spent first; the rest goes to the
	// Rényi and zCDP conversions.
	rest := target - t.approx.Delta
	if rest <= 0 {
		return nil, fmt.Errorf("accountant: the event log's (ε, δ) events already spend δ = %g ≥ %g", t.approx.Delta, target)
	}
	e, order, err := t.rdp.Epsilon(rest)
	if err != nil {
		return nil, err
	}
	if !math.IsInf(e, 1) {
		rep.RDP = &RDPResult{Epsilon: e + t.approx.Epsilon, Delta: target, Order: order}
		consider(rep.RDP.Epsilon, "rdp")
	}
	if t.allZCDP {
		e, err := ZCDPEpsilon(t.rho, rest)
		if err != nil {
			return nil, err
		}
		rep.ZCDP = &ZCDPResult{Rho: t.rho, Epsilon: e + t.approx.Epsilon, Delta: target}
		consider(rep.ZCDP.Epsilon, "zcdp")
	}
	if t.allGaussian {
		mu := l2(t.mus)
		e, err := GDPEpsilon(mu, target)
		if err != nil {
			return nil, err
		}
		rep.GDP = &GDPResult{Mu: mu, Epsilon: e, Delta: target}
		consider(e, "gdp")
	}
	if math.IsInf(best, 1) {
		return nil, fmt.Errorf("accountant: no accountant gives a finite ε at δ = %g (a tabulated Rényi curve may not reach high enough orders)", target)
	}
	rep.Epsilon = best
	return rep, nil
}

// deltaAt sets the report's smallest δ at ε = target over the Rényi, zCDP
// and GDP conversions.
func (t *tally) deltaAt(rep *Report, target float64) (*Report, error) {
	best := math.Inf(1)
	consider := func(v float64, method string) {
		if v < best {
			best, rep.Method = v, method
		}
	}
	rep.Epsilon = target
	rest := target - t.approx.Epsilon
	if rest < 0 {
		// The approximate events alone exceed ε: only the trivial δ = 1.
		rep.RDP = &RDPResult{Epsilon: target, Delta: 1}
		rep.Delta, rep.Method = 1, "none"
		return rep, nil
	}
	d, order, err := t.rdp.Delta(rest)
	if err != nil {
		return nil, err
	}
	rep.RDP = &RDPResult{Epsilon: target, Delta: math.Min(1, d+t.approx.Delta), Order: order}
	consider(rep.RDP.Delta, "rdp")
	if t.allZCDP {
		d, err := ZCDPDelta(t.rho, rest)
		if err != nil {
			return nil, err
		}
		rep.ZCDP = &ZCDPResult{Rho: t.rho, Epsilon: target, Delta: math.Min(1, d+t.approx.Delta)}
		consider(rep.ZCDP.Delta, "zcdp")
	}
	if t.allGaussian {
		mu := l2(t.mus)
		d, err := GDPDelta(mu, target)
		if err != nil {
			return nil, err
		}
		rep.GDP = &GDPResult{Mu: mu, Epsilon: target, Delta: d}
		consider(d, "gdp")
	}
	rep.Delta = best
	return rep, nil
}

// exactRho returns ρ for events whose Rényi curve is exactly linear
// (zCDP), so that the zCDP conversion loses nothing.
func exactRho(ev Event) (float64, bool) {
	switch e := ev.(type) {
	case Gaussian:
		return e.Rho(), true
	case DiscreteGaussian:
		return e.Rho(), true
	case ZCDP:
		return e.Rho, true
	case RDPCurve:
		if len(e.Orders) == 0 {
			return e.Rho, true
		}
	}
	return 0, false
}

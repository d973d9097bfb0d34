package accountant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/param"
)

// EventLogVersion is the event log format version this package reads and writes.
const EventLogVersion = 1

// EventLog is a versioned, JSON- and YAML-serialisable list of privacy events
// with counts: the record of everything released about one dataset. See
// docs/accountant.md for the format.
type EventLog struct {
	Version int             `json:"version"`
	Name    string          `json:"name,omitempty"`
	Events  []EventLogEntry `json:"events"`
}

// EventLogEntry is one event of an event log. Type selects the mechanism and
// which of the other fields apply; Count (default 1) repeats it.
type EventLogEntry struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Count       *int            `json:"count,omitempty"`
	Epsilon     *float64        `json:"epsilon,omitempty"`
	Delta       *float64        `json:"delta,omitempty"`
	Scale       *float64        `json:"scale,omitempty"`
	Sigma       *float64        `json:"sigma,omitempty"`
	Sensitivity *float64        `json:"sensitivity,omitempty"`
	Rho         *float64        `json:"rho,omitempty"`
	Categories  *int            `json:"categories,omitempty"`
	Metric      string          `json:"metric,omitempty"`
	Unit        string          `json:"unit,omitempty"`
	Orders      []float64       `json:"orders,omitempty"`
	Epsilons    []float64       `json:"epsilons,omitempty"`
	Events      []EventLogEntry `json:"events,omitempty"`
}

// EventLogError locates a problem in an event log: Path is the entry
// ("events[3]", "events[1].events[0]") and Field the offending field, empty
// when the problem is the entry or the document as a whole.
type EventLogError struct {
	Path  string
	Field string
	Err   error
}

func (e *EventLogError) Error() string {
	loc := e.Path
	if e.Field != "" {
		if loc != "" {
			loc += "."
		}
		loc += e.Field
	}
	// "ledger" is the word of the command that reads event logs
	// (tracepriv account ledger), kept for its users' scripts.
	if loc == "" {
		return "ledger: " + e.Err.Error()
	}
	return "ledger: " + loc + ": " + e.Err.Error()
}

func (e *EventLogError) Unwrap() error { return e.Err }

// eventLogFields lists, per event type, the fields it accepts besides type,
// name and count.
var eventLogFields = map[string][]string{
	"laplace":             {"scale", "epsilon", "sensitivity"},
	"gaussian":            {"sigma", "sensitivity"},
	"discrete_laplace":    {"scale", "epsilon", "sensitivity"},
	"discrete_gaussian":   {"sigma", "sensitivity"},
	"grr":                 {"epsilon", "categories"},
	"randomized_response": {"epsilon", "categories"},
	"epsilon_delta":       {"epsilon", "delta"},
	"zcdp":                {"rho"},
	"rdp":                 {"rho", "orders", "epsilons"},
	"planar_laplace":      {"epsilon", "unit"},
	"metric":              {"epsilon", "metric"},
	"composed":            {"events"},
}

// ParseEventLog reads an event log in JSON or YAML (detected from the first
// non-blank character), rejects unknown fields, and validates it. Errors
// are *EventLogError values naming the entry and field.
func ParseEventLog(r io.Reader) (*EventLog, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &EventLogError{Err: errors.New("empty document")}
	}
	if trimmed[0] != '{' {
		data, err = yaml.YAMLToJSON(data)
		if err != nil {
			return nil, &EventLogError{Err: fmt.Errorf("not JSON, and invalid YAML: %w", err)}
		}
	}
	var top struct {
		Version *int              `json:"version"`
		Name    string            `json:"name"`
		Events  []json.RawMessage `json:"events"`
	}
	if err := strictUnmarshal(data, &top); err != nil {
		return nil, documentError(err)
	}
	if top.Version == nil {
		return nil, &EventLogError{Field: "version", Err: fmt.Errorf("missing (this reader understands version %d)", EventLogVersion)}
	}
	if *top.Version != EventLogVersion {
		return nil, &EventLogError{Field: "version", Err: fmt.Errorf("unsupported version %d (this reader understands version %d)", *top.Version, EventLogVersion)}
	}
	l := &EventLog{Version: *top.Version, Name: top.Name}
	if top.Events == nil {
		return nil, &EventLogError{Field: "events", Err: errors.New("missing")}
	}
	for i, raw := range top.Events {
		e, err := parseEntry(raw, fmt.Sprintf("events[%d]", i))
		if err != nil {
			return nil, err
		}
		l.Events = append(l.Events, e)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

func strictUnmarshal(data []byte, v any) error { return jsondoc.Decode(data, v) }

func parseEntry(raw json.RawMessage, path string) (EventLogEntry, error) {
	// Nested events are kept raw and parsed one by one, so that their
	// errors carry their own path; the outer Events field shadows the
	// embedded one.
	var e struct {
		EventLogEntry
		Events []json.RawMessage `json:"events"`
	}
	if err := strictUnmarshal(raw, &e); err != nil {
		return EventLogEntry{}, jsonEventLogError(path, err)
	}
	out := e.EventLogEntry
	if e.Events != nil {
		out.Events = []EventLogEntry{}
	}
	for j, r := range e.Events {
		inner, err := parseEntry(r, fmt.Sprintf("%s.events[%d]", path, j))
		if err != nil {
			return EventLogEntry{}, err
		}
		out.Events = append(out.Events, inner)
	}
	return out, nil
}

// documentError words a problem with the event log document as a whole: a
// document that is not an object (another kind of file, for instance) and a
// field an event log does not have.
func documentError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field == "" {
		// Anything but an object went through the YAML reader (YAML is a
		// superset of JSON), so the kind is named without either; a
		// string is text that is neither, such as a CSV or PLT file.
		what := "a single value"
		switch te.Value {
		case "string":
			what = "plain text"
		case "array":
			what = "a list"
		}
		return &EventLogError{Err: fmt.Errorf("the document is %s, not an object with \"version\" and \"events\"", what)}
	}
	le := jsonEventLogError("", err)
	var e *EventLogError
	if errors.As(le, &e) && e.Field != "" && e.Err == errUnknownField {
		e.Err = errors.New(`unknown field (an event log has only "version", "name" and "events")`)
	}
	return le
}

// errUnknownField is an EventLogError's Err for a field no event has.
var errUnknownField = errors.New("unknown field")

// jsonEventLogError turns encoding/json's errors into EventLogErrors that name
// the field.
func jsonEventLogError(path string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := strings.TrimPrefix(te.Field, "EventLogEntry.")
		return &EventLogError{Path: path, Field: field, Err: fmt.Errorf("expected %v, got JSON %s", te.Type, te.Value)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &EventLogError{Path: path, Err: fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &EventLogError{Path: path, Err: errors.New("invalid JSON: unexpected end of input")}
	}
	if f, ok := jsondoc.UnknownField(err); ok {
		return &EventLogError{Path: path, Field: f, Err: errUnknownField}
	}
	return &EventLogError{Path: path, Err: err}
}

// Validate checks every entry, returning the first problem as a
// *EventLogError.
func (l *EventLog) Validate() error {
	if l.Version != EventLogVersion {
		return &EventLogError{Field: "version", Err: fmt.Errorf("unsupported version %d (this reader understands version %d)", l.Version, EventLogVersion)}
	}
	for i, e := range l.Events {
		if _, err := e.event(fmt.Sprintf("events[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// Event returns the entry as an Event (a SelfComposed when Count ≠ 1).
func (e EventLogEntry) Event() (Event, error) { return e.event("") }

func (e EventLogEntry) set() map[string]bool {
	return map[string]bool{
		"epsilon": e.Epsilon != nil, "delta": e.Delta != nil, "scale": e.Scale != nil,
		"sigma": e.Sigma != nil, "sensitivity": e.Sensitivity != nil, "rho": e.Rho != nil,
		"categories": e.Categories != nil, "metric": e.Metric != "", "unit": e.Unit != "",
		"orders": e.Orders != nil, "epsilons": e.Epsilons != nil, "events": e.Events != nil,
	}
}

func (e EventLogEntry) event(path string) (Event, error) {
	fail := func(field string, err error) error {
		var pe *param.Error
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s, got %v", pe.Why, pe.Value)
		}
		return &EventLogError{Path: path, Field: field, Err: err}
	}
	allowed, ok := eventLogFields[e.Type]
	if !ok {
		names := make([]string, 0, len(eventLogFields))
		for k := range eventLogFields {
			names = append(names, k)
		}
		sort.Strings(names)
		if e.Type == "" {
			return nil, fail("type", fmt.Errorf("missing; one of %s", strings.Join(names, ", ")))
		}
		return nil, fail("type", fmt.Errorf("unknown event type %q; one of %s", e.Type, strings.Join(names, ", ")))
	}
	for field, isSet := range e.set() {
		if isSet && !contains(allowed, field) {
			return nil, fail(field, fmt.Errorf("does not apply to a %s event (it takes %s)", e.Type, strings.Join(allowed, ", ")))
		}
	}
	count := 1
	if e.Count != nil {
		count = *e.Count
		if count < 0 {
			return nil, fail("count", fmt.Errorf("must be non-negative, got %d", count))
		}
	}
	f := func(p *float64, def float64) float64 {
		if p == nil {
			return def
		}
		return *p
	}
	sens := f(e.Sensitivity, 1)
	var ev Event
	switch e.Type {
	case "laplace", "discrete_laplace":
		if (e.Scale == nil) == (e.Epsilon == nil) {
			return nil, fail("scale", errors.New("give exactly one of scale and epsilon"))
		}
		if e.Epsilon != nil {
			if err := param.Positive("epsilon", *e.Epsilon); err != nil {
				return nil, fail("epsilon", err)
			}
		}
		scale := f(e.Scale, sens/f(e.Epsilon, 1))
		if e.Type == "laplace" {
			ev = Laplace{Scale: scale, Sensitivity: sens}
		} else {
			if err := param.Integer("sensitivity", sens); err != nil {
				return nil, fail("sensitivity", err)
			}
			ev = DiscreteLaplace{Scale: scale, Sensitivity: int(sens)}
		}
	case "gaussian", "discrete_gaussian":
		if e.Sigma == nil {
			return nil, fail("sigma", errors.New("missing"))
		}
		if e.Type == "gaussian" {
			ev = Gaussian{Sigma: *e.Sigma, Sensitivity: sens}
		} else {
			if err := param.Integer("sensitivity", sens); err != nil {
				return nil, fail("sensitivity", err)
			}
			ev = DiscreteGaussian{Sigma: *e.Sigma, Sensitivity: int(sens)}
		}
	case "grr", "randomized_response":
		if e.Epsilon == nil {
			return nil, fail("epsilon", errors.New("missing"))
		}
		k := 2
		if e.Categories != nil {
			k = *e.Categories
		} else if e.Type == "grr" {
			return nil, fail("categories", errors.New("missing"))
		}
		ev = GRR{Epsilon: *e.Epsilon, Categories: k}
	case "epsilon_delta":
		if e.Epsilon == nil {
			return nil, fail("epsilon", errors.New("missing"))
		}
		ev = EpsilonDelta{Epsilon: *e.Epsilon, Delta: f(e.Delta, 0)}
	case "zcdp":
		if e.Rho == nil {
			return nil, fail("rho", errors.New("missing"))
		}
		ev = ZCDP{Rho: *e.Rho}
	case "rdp":
		if e.Rho == nil && e.Orders == nil {
			return nil, fail("rho", errors.New("give rho (a linear curve) or orders and epsilons"))
		}
		ev = RDPCurve{Name: e.Name, Rho: f(e.Rho, 0), Orders: e.Orders, Epsilons: e.Epsilons}
	case "planar_laplace":
		if e.Epsilon == nil {
			return nil, fail("epsilon", errors.New("missing"))
		}
		unit := e.Unit
		if unit == "" {
			unit = "m"
		}
		ev = PlanarLaplace(*e.Epsilon, unit)
	case "metric":
		if e.Epsilon == nil {
			return nil, fail("epsilon", errors.New("missing"))
		}
		ev = MetricEvent{Epsilon: *e.Epsilon, Metric: e.Metric}
	case "composed":
		if len(e.Events) == 0 {
			return nil, fail("events", errors.New("a composed event needs at least one event"))
		}
		var c Composed
		for j, inner := range e.Events {
			ie, err := inner.event(fmt.Sprintf("%s.events[%d]", path, j))
			if err != nil {
				return nil, err
			}
			c.Events = append(c.Events, ie)
		}
		ev = c
	}
	if err := ev.Validate(); err != nil {
		var pe *param.Error
		if errors.As(err, &pe) {
			return nil, fail(pe.Name, pe)
		}
		return nil, fail("", err)
	}
	if count != 1 {
		ev = SelfComposed{Event: ev, Count: count}
	}
	return ev, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Event returns the whole event log as one Composed event.
func (l *EventLog) Event() (Composed, error) {
	var c Composed
	for i, e := range l.Events {
		ev, err := e.event(fmt.Sprintf("events[%d]", i))
		if err != nil {
			return Composed{}, err
		}
		c.Events = append(c.Events, ev)
	}
	return c, nil
}

package sanitize

import (
	"errors"
	"io"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/trace"
)

// FileRelease is the release of one trace file under the budget ledger's
// admission policy (budget.Admission): refused before any noise is drawn,
// each person's upper bound charged immediately before drawing, settled
// to their certified epsilon when the trace and its certificate landed,
// undone when they did not. Release takes the traces read into memory;
// Stream reads a CSV file twice without holding it.
type FileRelease struct {
	// In is the input file (the person rule and messages name it).
	In string
	// Files are where the release and its certificate go.
	Files Files
	// Options are the release's options (Progress is set by Release).
	Options Options
	// Admission charges the release; nil when it is not charged
	// (--no-ledger, or a seeded, non-private run).
	Admission *budget.Admission
	// Report is told, as the release goes, what was read and charged
	// (nil: nothing is told).
	Report Reporter
}

// silent is the Reporter of a FileRelease without one.
type silent struct{}

func (silent) ReportSkipped(*trace.Report)               {}
func (silent) WriteMerged([]trace.Merge)                 {}
func (silent) ReportPersons([]trace.PersonCount)         {}
func (silent) ReportCharge(budget.Store, budget.Request) {}
func (silent) Bar(int, string) (func(string), func())    { return func(string) {}, func() {} }

func (f *FileRelease) reporter() Reporter {
	if f.Report == nil {
		return silent{}
	}
	return f.Report
}

// Reporter is what a FileRelease tells its user while it runs (a command
// prints it on stderr); cli.Env is one.
type Reporter interface {
	ReportSkipped(*trace.Report)
	WriteMerged([]trace.Merge)
	ReportPersons([]trace.PersonCount)
	ReportCharge(budget.Store, budget.Request)
	// Bar starts a progress report of total stages.
	Bar(total int, what string) (step func(string), finish func())
}

// ReleaseStep names the step of a FileRelease that failed.
type ReleaseStep string

// The steps of a FileRelease, in order.
const (
	// StepInput: who the persons of the file are (the person rule).
	StepInput ReleaseStep = "input"
	// StepLedger: the ledger refused or could not record the charge, or a
	// person has no uid to charge (ErrNoUID); nothing was drawn.
	StepLedger ReleaseStep = "ledger"
	// StepRelease: designing, certifying or drawing the release.
	StepRelease ReleaseStep = "release"
	// StepWrite: writing the release and its certificate (nothing was
	// written).
	StepWrite ReleaseStep = "write"
	// StepSettle: settling the charge of a release that landed (the
	// charge stays at its upper bound).
	StepSettle ReleaseStep = "settle"
)

// FileReleaseError is a failed step of a FileRelease.
type FileReleaseError struct {
	Step ReleaseStep
	Err  error
	// Charge says what became of the pending charge of a release that
	// did not land (budget.Admission.UndoNote), "" when nothing was
	// charged.
	Charge string
}

func (e *FileReleaseError) Error() string { return string(e.Step) + ": " + e.Err.Error() + e.Charge }
func (e *FileReleaseError) Unwrap() error { return e.Err }

// Release releases traces, the persons of In read into memory (rep is
// what reading skipped), charging each person target (their upper bound,
// Options.Epsilon; nil when not charged) before anything is drawn.
func (f FileRelease) Release(traces []*trace.Trace, rep *trace.Report, target map[string]float64) (*Certificate, error) {
	adm := f.Admission
	if err := adm.Charge("", target); err != nil {
		return nil, &FileReleaseError{Step: StepLedger, Err: err}
	}
	step, finish := f.reporter().Bar(4, "sanitize")
	opt := f.Options
	opt.Progress = step
	outs, cert, err := Release(traces, opt)
	finish()
	if err != nil {
		return nil, &FileReleaseError{Step: StepRelease, Err: err, Charge: adm.UndoNote()}
	}
	cert.RecordInput(rep)
	if err := f.Files.Write(traces, outs, cert); err != nil {
		return nil, &FileReleaseError{Step: StepWrite, Err: err, Charge: adm.UndoNote()}
	}
	return cert, f.settle(cert)
}

// StreamChunk is the points a streamed release holds at once.
const StreamChunk = 1 << 16

// Stream releases In, a CSV file read with ro, in two passes without
// holding it (NewStream), charging each person their certified epsilon,
// which the first pass gives before anything is drawn. It reports done
// false, with no error, when the file cannot be streamed (then read it
// and call Release).
func (f FileRelease) Stream(ro trace.ReadOptions) (done bool, cert *Certificate, err error) {
	ro.Chunk = StreamChunk
	var open []io.Closer
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	reader := func() (trace.Reader, error) {
		r, err := infile.Open(f.In)
		if err != nil {
			return nil, err
		}
		open = append(open, r)
		o := ro
		o.Name = f.In
		return trace.NewReader(r, trace.CSV, o)
	}
	// The person rule over the streamed file (trace.Persons.Stream).
	persons, err := (trace.PersonRule{Corpus: ro.Corpus, UID: ro.UID}).Of(f.In)
	if err != nil {
		return true, nil, &FileReleaseError{Step: StepInput, Err: err}
	}
	ro.UID = ""
	reader, merged, err := persons.Stream(f.In, reader)
	if err != nil {
		return true, nil, &FileReleaseError{Step: StepInput, Err: err}
	}
	s, cert, err := NewStream(reader, f.Options)
	if errors.Is(err, ErrNotStreamable) {
		return false, nil, nil
	}
	if err != nil {
		return true, nil, &FileReleaseError{Step: StepRelease, Err: err}
	}
	f.reporter().ReportSkipped(s.Report())
	f.reporter().WriteMerged(merged)
	var counts []trace.PersonCount
	for _, p := range cert.Persons {
		counts = append(counts, trace.PersonCount{UID: p.UID, Files: 1, Points: p.Points})
	}
	f.reporter().ReportPersons(counts)
	// The stream's certificate comes before any noise is drawn
	// (WriteStream draws): charge it, pending until the files land.
	adm := f.Admission
	if adm != nil {
		certified, err := cert.Epsilons()
		if err != nil {
			return true, nil, &FileReleaseError{Step: StepLedger, Err: err}
		}
		if err := adm.Charge("", certified); err != nil {
			return true, nil, &FileReleaseError{Step: StepLedger, Err: err}
		}
	}
	files := f.Files
	files.Format = trace.CSV
	if err := files.WriteStream(s, cert); err != nil {
		return true, nil, &FileReleaseError{Step: StepWrite, Err: err, Charge: adm.UndoNote()}
	}
	return true, cert, f.settle(cert)
}

// settle settles the pending charge of a release that has landed to each
// person's certified epsilon_max, and reports it.
func (f FileRelease) settle(cert *Certificate) error {
	adm := f.Admission
	if adm == nil {
		return nil
	}
	eps, err := cert.Epsilons()
	if err != nil {
		return &FileReleaseError{Step: StepLedger, Err: err}
	}
	if err := adm.Settle("", eps); err != nil {
		return &FileReleaseError{Step: StepSettle, Err: err}
	}
	f.reporter().ReportCharge(adm.Store(), budget.Request{Mechanism: budget.CIP, Epsilon: eps})
	return nil
}

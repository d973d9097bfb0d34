package pipeline

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// Element types travel between steps with gob coders. Beam's default for
// a struct is a JSON coder, which cannot carry a NaN altitude, a map keyed
// by float64 (prior.Positions) or an exact time zone; gob carries all
// three, and floats bit for bit, which the byte-for-byte equality of
// seeded releases and the exact prior rely on. Beam finds coder functions
// by symbol name, so each type has its own named pair (the instances of
// one generic function share a name). Beam registers coders for the
// process, at init: a pipeline of a program importing this package carries
// trace.Trace with gob too.
func init() {
	beam.RegisterCoder(reflect.TypeFor[trace.Trace](), encTrace, decTrace)
	beam.RegisterCoder(reflect.TypeFor[PersonRelease](), encPersonRelease, decPersonRelease)
	beam.RegisterCoder(reflect.TypeFor[Fitted](), encFitted, decFitted)
	beam.RegisterCoder(reflect.TypeFor[corpus.FileScan](), encScan, decScan)
	beam.RegisterCoder(reflect.TypeFor[unitBatch](), encBatch, decBatch)
	beam.RegisterCoder(reflect.TypeFor[groupRecord](), encRelease, decRelease)
	beam.RegisterCoder(reflect.TypeFor[sanitize.Failure](), encFailure, decFailure)
	beam.RegisterCoder(reflect.TypeFor[windowTask](), encTask, decTask)
	beam.RegisterCoder(reflect.TypeFor[windowOutcome](), encOutcome, decOutcome)
	beam.RegisterCoder(reflect.TypeFor[fileSummary](), encSummary, decSummary)
	beam.RegisterCoder(reflect.TypeFor[prior.Positions](), encPositions, decPositions)
}

func gobEncode[T any](v T) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(&v)
	return b.Bytes(), err
}

func gobDecode[T any](data []byte) (T, error) {
	var v T
	err := gob.NewDecoder(bytes.NewReader(data)).Decode(&v)
	return v, err
}

func encTrace(v trace.Trace) ([]byte, error)         { return gobEncode(v) }
func decTrace(b []byte) (trace.Trace, error)         { return gobDecode[trace.Trace](b) }
func encFitted(v Fitted) ([]byte, error)             { return gobEncode(v) }
func decFitted(b []byte) (Fitted, error)             { return gobDecode[Fitted](b) }
func encScan(v corpus.FileScan) ([]byte, error)      { return gobEncode(v) }
func decScan(b []byte) (corpus.FileScan, error)      { return gobDecode[corpus.FileScan](b) }
func encBatch(v unitBatch) ([]byte, error)           { return gobEncode(v) }
func decBatch(b []byte) (unitBatch, error)           { return gobDecode[unitBatch](b) }
func encRelease(v groupRecord) ([]byte, error)       { return gobEncode(v) }
func decRelease(b []byte) (groupRecord, error)       { return gobDecode[groupRecord](b) }
func encFailure(v sanitize.Failure) ([]byte, error)  { return gobEncode(v) }
func decFailure(b []byte) (sanitize.Failure, error)  { return gobDecode[sanitize.Failure](b) }
func encTask(v windowTask) ([]byte, error)           { return gobEncode(v) }
func decTask(b []byte) (windowTask, error)           { return gobDecode[windowTask](b) }
func encOutcome(v windowOutcome) ([]byte, error)     { return gobEncode(v) }
func decOutcome(b []byte) (windowOutcome, error)     { return gobDecode[windowOutcome](b) }
func encSummary(v fileSummary) ([]byte, error)       { return gobEncode(v) }
func decSummary(b []byte) (fileSummary, error)       { return gobDecode[fileSummary](b) }
func encPositions(v prior.Positions) ([]byte, error) { return gobEncode(v) }
func decPositions(b []byte) (prior.Positions, error) { return gobDecode[prior.Positions](b) }

// personWire is a PersonRelease between steps: the certificate travels in
// its own format (sanitize.WriteCertificate), which is what a reader of
// it gets anyway; gob would turn its empty lists into missing ones.
type personWire struct {
	UID         string
	Traces      []*trace.Trace
	Certificate []byte
}

func encPersonRelease(v PersonRelease) ([]byte, error) {
	var c bytes.Buffer
	if v.Certificate != nil {
		if err := sanitize.WriteCertificate(&c, v.Certificate); err != nil {
			return nil, err
		}
	}
	return gobEncode(personWire{UID: v.UID, Traces: v.Traces, Certificate: c.Bytes()})
}

func decPersonRelease(b []byte) (PersonRelease, error) {
	w, err := gobDecode[personWire](b)
	if err != nil {
		return PersonRelease{}, err
	}
	r := PersonRelease{UID: w.UID, Traces: w.Traces}
	if len(w.Certificate) > 0 {
		if r.Certificate, err = sanitize.ReadCertificate(bytes.NewReader(w.Certificate)); err != nil {
			return PersonRelease{}, err
		}
	}
	return r, nil
}

// errMark starts the message of every error a tracepriv DoFn returns, so
// that Run can find it in the runner's report (which wraps it in the
// failed bundle's whole execution plan and stack).
const errMark = "tracepriv-pipeline: "

// stageError marks an error returned by a DoFn; its message is one line.
func stageError(format string, a ...any) error {
	return errors.New(errMark + strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " "))
}

// Run runs p on the runner named by Beam's --runner flag (prism, in this
// process, when unset; universal for a portable job server such as Flink's
// or Spark's; dataflow) and waits for it. A failure in a tracepriv step is
// returned as that step's error alone.
//
// Run changes no logging. Beam logs, and Prism logs, through log/slog's
// default logger; Beam's own initialisation (beam.Init, which Run calls if
// the program has not) points that logger at stderr, at the level of
// Beam's log.LogLevel. A program that wants them elsewhere says so in its
// main, with Beam's log.SetupLogging or by setting slog's default, as the
// tracepriv-pipeline command does with --verbose.
func Run(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
	initBeam()
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return res, compact(err)
	}
	return res, nil
}

// logger returns l, or a logger that drops everything when l is nil.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// runAndRead builds a pipeline with build, runs it, and reads back the
// file at path that its last step wrote, for the launcher to report.
func runAndRead(ctx context.Context, build func(beam.Scope), path string) (beam.PipelineResult, []byte, error) {
	p, s := beam.NewPipelineWithRoot()
	build(s)
	res, err := Run(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("the pipeline finished but %s cannot be read here (on a cluster, read it where the output is mounted): %w", path, err)
	}
	return res, b, nil
}

// initBeam initialises Beam's runtime, which must be done before a
// pipeline is built, for callers that have not (tests, library users; the
// command's main does it first, to serve as a worker when a runner starts
// it as one).
func initBeam() {
	if !beam.Initialized() {
		beam.Init()
	}
}

// compact extracts a tracepriv step's message from a runner's error.
func compact(err error) error {
	s := err.Error()
	i := strings.Index(s, errMark)
	if i < 0 {
		return err
	}
	msg, _, _ := strings.Cut(s[i+len(errMark):], "\n")
	return errors.New(strings.TrimSpace(msg))
}

// counter returns the committed (else attempted) value of a tracepriv
// counter of a finished pipeline, 0 if the runner reported none.
func counter(res beam.PipelineResult, name string) int64 {
	if res == nil {
		return 0
	}
	var total int64
	for _, c := range res.Metrics().Query(func(r metrics.SingleResult) bool {
		return r.Namespace() == metricsNamespace && r.Name() == name
	}).Counters() {
		if v := c.Committed; v != 0 {
			total += v
		} else {
			total += c.Attempted
		}
	}
	return total
}

// metricsNamespace is the namespace of the pipelines' Beam counters.
const metricsNamespace = "tracepriv"

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

func init() {
	register.Function1x1(digestRelease)
	register.Function2x1(digestFailure)
	register.DoFn1x1[Fitted, error](&writeFitted{})
}

// readPattern reads the trace files pattern matches, in Match's order,
// with the corpus release's uid rule if attribute.
func readPattern(t *testing.T, pattern string, attribute bool) []*trace.Trace {
	t.Helper()
	files, _, err := Match(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var all []*trace.Trace
	for _, f := range files {
		ts, _, err := trace.ReadFile(f, trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if attribute {
			ts = corpus.Attribute(f, ts)
		}
		all = append(all, ts...)
	}
	return all
}

// digest identifies a person's release: the released traces' bytes (CSV)
// and the certificate's epsilon, points and randomness. Certificates carry
// their timing, which two identical releases differ in.
func digest(uid string, outs []*trace.Trace, cert *sanitize.Certificate) string {
	var b bytes.Buffer
	if err := trace.Write(&b, outs, trace.CSV); err != nil {
		return "error: " + err.Error()
	}
	h := sha256.Sum256(b.Bytes())
	return fmt.Sprintf("%s %x epsilon %v points %d traces %d %s", uid, h[:8], cert.EpsilonMax, cert.Persons[0].Points, len(cert.Persons[0].Traces), cert.Randomness)
}

// digestRelease is the user's own step after SanitizeTraces.
func digestRelease(r PersonRelease) string { return digest(r.UID, r.Traces, r.Certificate) }

// digestFailure turns a failure into a line passert can compare.
func digestFailure(uid, why string) string { return uid + ": " + why }

// TestSanitizeTracesInUserPipeline composes SanitizeTraces into a pipeline
// of the user's own (traces made in memory, a step of theirs after it,
// passert) on Beam's direct runner: every person's release is
// sanitize.Release of that person's traces with the same seed, byte for
// byte, whatever the order the runner hands the traces over in; a person
// who cannot be released comes out on the second output and does not stop
// the others. Negative control: releasing synth-1's two traces one by one
// gives other bytes, so the comparison tells a joint release per person
// from a release per trace.
func TestSanitizeTracesInUserPipeline(t *testing.T) {
	// The bundled synthetic sample: three people, synth-1 with two traces.
	traces := readPattern(t, filepath.Join("..", "internal", "sample", "*", "*.plt"), true)
	params := testParams(3)
	opt, err := params.options()
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	byUID := map[string][]*trace.Trace{}
	for _, tr := range traces {
		byUID[tr.UID] = append(byUID[tr.UID], tr)
	}
	for uid, ts := range byUID {
		slices.SortFunc(ts, func(a, b *trace.Trace) int { return a.Points[0].Time.Compare(b.Points[0].Time) })
		outs, cert, err := sanitize.Release(ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, digest(uid, outs, cert))
		if uid != "synth-1" {
			continue
		}
		if len(ts) != 2 {
			t.Fatalf("synth-1 has %d traces, want 2", len(ts))
		}
		for _, one := range ts {
			o, c, err := sanitize.Release([]*trace.Trace{one}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if d := digest(uid, o, c); slices.Contains(want, any(d)) {
				t.Fatal("negative control: a trace of synth-1 released alone gives the joint release")
			}
		}
	}
	if len(want) != 3 {
		t.Fatalf("%d people in the sample, want 3", len(want))
	}

	// The user's pipeline: traces in reverse order, and a person at two
	// places at once, who cannot be released.
	var in []trace.Trace
	for i := len(traces) - 1; i >= 0; i-- {
		in = append(in, *traces[i])
	}
	twice := *traces[0]
	twice.UID = "twice"
	in = append(in, twice, twice)
	p, s := beam.NewPipelineWithRoot()
	released, failed := SanitizeTraces(s, beam.CreateList(s, in), params)
	passert.Equals(s, beam.ParDo(s, digestRelease, released), want...)
	passert.Count(s, failed, "failures", 1)
	passert.True(s, beam.ParDo(s, digestFailure, failed), func(line string) bool {
		return strings.HasPrefix(line, "twice: ") && strings.Contains(line, "a person is at one place at a time")
	})
	initBeam()
	if _, err := beam.Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
}

// TestSanitizeTracesRefusesBadParams: an invalid parameter panics at
// construction, naming it, as Beam's transforms do; Check says it first.
func TestSanitizeTracesRefusesBadParams(t *testing.T) {
	t.Parallel()
	bad := testParams(1)
	bad.Radius = -1
	var pe *param.Error
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "radius") {
		t.Fatalf("Check: %v", err)
	} else if !errors.As(err, &pe) {
		t.Errorf("Check: %T, want a *param.Error", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "radius") {
			t.Errorf("SanitizeTraces with radius -1: recovered %v", r)
		}
	}()
	_, s := beam.NewPipelineWithRoot()
	SanitizeTraces(s, beam.CreateList(s, []trace.Trace{{UID: "a"}}), bad)
}

// writeFitted is the user's own step after FitPrior: it writes the
// element with the pipeline's coder, for the test to read.
type writeFitted struct {
	Path string
}

func (f *writeFitted) ProcessElement(v Fitted) error {
	b, err := encFitted(v)
	if err != nil {
		return err
	}
	return os.WriteFile(f.Path, b, 0o644)
}

// TestFitPrior composes FitPrior into a pipeline of the user's own (on
// Prism) over GeoLife user 000's traces, handed over in reverse order: the
// prior is prior.Fit's over the same traces in FitPrior's order, byte for
// byte, and the report (with every window's fit) is prior.Fit's.
func TestFitPrior(t *testing.T) {
	traces := readPattern(t, filepath.Join(geolife(t), "000", "*.plt"), false)
	params := FitParams{Family: [2]float64{0.2, 0.8}, Corpus: "geolife 000"}
	ordered := slices.Clone(traces)
	slices.SortFunc(ordered, func(a, b *trace.Trace) int { return strings.Compare(traceKey(a), traceKey(b)) })
	want, wantRep, err := prior.Fit(ordered, params.Mode().(prior.Options))
	if err != nil {
		t.Fatal(err)
	}
	wantRep.Workers = 0 // the single machine's goroutines

	var in []trace.Trace
	for i := len(traces) - 1; i >= 0; i-- {
		in = append(in, *traces[i])
	}
	path := filepath.Join(t.TempDir(), "fitted.gob")
	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &writeFitted{Path: path}, FitPrior(s, beam.CreateList(s, in), params))
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decFitted(b)
	if err != nil {
		t.Fatal(err)
	}
	var a, c bytes.Buffer
	if err := want.Write(&a); err != nil {
		t.Fatal(err)
	}
	if err := got.Prior.Write(&c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Errorf("FitPrior's prior\n%s\nprior.Fit's\n%s", c.Bytes(), a.Bytes())
	}
	// The report went through the pipeline's coder: compare it with
	// prior.Fit's through the same coder.
	wb, err := encFitted(Fitted{Prior: want, Report: wantRep})
	if err != nil {
		t.Fatal(err)
	}
	wantCoded, err := decFitted(wb)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Report, wantCoded.Report) {
		t.Errorf("FitPrior's report\n%+v\nprior.Fit's\n%+v", got.Report, wantCoded.Report)
	}
	if got.Report.Windows < 5 || len(got.Report.Fits) != got.Report.Windows {
		t.Errorf("%d windows fitted, %d fits listed", got.Report.Windows, len(got.Report.Fits))
	}
}

// syncBuffer is a buffer several goroutines log to.
type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu <- struct{}{}
	defer func() { <-w.mu }()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu <- struct{}{}
	defer func() { <-w.mu }()
	return w.b.String()
}

// TestRunLeavesLoggingAlone: running a pipeline, twice, leaves the
// process's default slog logger as it was (the earlier Run replaced it on
// every call), and what the launcher says goes to the logger given in the
// options. Beam's own initialisation, which does set it, has run in
// TestMain, as a program's main runs it.
func TestRunLeavesLoggingAlone(t *testing.T) {
	before := slog.Default()
	buf := &syncBuffer{mu: make(chan struct{}, 1)}
	o := testOptions(filepath.Join("..", "internal", "sample", "*", "*.plt"), "", 1)
	o.Logger = slog.New(slog.NewTextHandler(buf, nil))
	for i := range 2 {
		o.Output = filepath.Join(t.TempDir(), "released")
		if _, err := Sanitize(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if slog.Default() != before {
			t.Fatalf("run %d replaced slog's default logger", i+1)
		}
	}
	if n := strings.Count(buf.String(), "sanitize: done"); n != 2 {
		t.Errorf("the options' logger was told of %d finished runs, want 2:\n%s", n, buf.String())
	}
}

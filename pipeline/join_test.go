package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

func init() {
	register.Function1x1(traceUID)
	register.Function1x1(releaseUID)
}

func traceUID(t trace.Trace) string     { return t.UID }
func releaseUID(r PersonRelease) string { return r.UID }

// splitPerson is the corpus of the join tests (issue 31, item 1): the
// bundled sample's three persons, each in their own folder of the corpus
// Q, but for synth-1's lunch, which lies in GeoLife's layout under another
// folder, Q/old-phone/synth-1/Trajectory: one uid in two folders. By the
// person rule (trace.JoinPersons) old-phone and synth-1 are one person,
// released as old-phone (the least name): three persons, not four.
func splitPerson(t *testing.T) (root string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "Q")
	for from, to := range map[string]string{
		"synth-1/commute.plt": "synth-1/commute.plt",
		"synth-1/lunch.plt":   "old-phone/synth-1/Trajectory/lunch.plt",
		"synth-2/cycle.plt":   "synth-2/cycle.plt",
		"synth-3/walk.plt":    "synth-3/walk.plt",
	} {
		b, err := sample.Corpus.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, filepath.FromSlash(to))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// singleMachineCorpus reads root as the CLI reads `--in root --corpus`
// (trace.ReadPaths, the joins included), checking that the join is there
// to test: three persons, old-phone holding both of synth-1's traces.
func singleMachineCorpus(t *testing.T, root string) []*trace.Trace {
	t.Helper()
	var traces []*trace.Trace
	if _, _, err := trace.ReadPaths([]string{root}, trace.ReadOptions{Corpus: true}, func(_ string, ts []*trace.Trace) {
		traces = append(traces, ts...)
	}); err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, tr := range traces {
		by[tr.UID]++
	}
	if want := map[string]int{"old-phone": 2, "synth-2": 1, "synth-3": 1}; !reflect.DeepEqual(by, want) {
		t.Fatalf("the single machine reads persons %v, want %v", by, want)
	}
	return traces
}

// TestFitJoinsPersons: the pipeline's Fit counts a person whose files lie
// in two folders once, as tracepriv fit --corpus does: its prior, report
// and private corpus index are prior.Fit's over the traces the single
// machine reads, byte for byte, with three persons in the
// leave-one-person-out coverage and in the index. Before the join it
// counted four (old-phone and synth-1 apart), holding person synth-1's
// lunch out of their own fold.
func TestFitJoinsPersons(t *testing.T) {
	root := splitPerson(t)
	traces := singleMachineCorpus(t, root)
	dir := t.TempDir()
	o := FitOptions{Input: filepath.Join(root, "**", "*.plt"), Output: filepath.Join(dir, "prior.json"), Report: filepath.Join(dir, "report.json"),
		FitParams: FitParams{MinDuration: 10 * time.Minute}, Reading: Reading{AsCorpus: true}}
	want, wantRep, err := prior.Fit(traces, o.Params().Mode().(prior.Options))
	if err != nil {
		t.Fatal(err)
	}
	if wantRep.HeldOutCoverage == nil || wantRep.HeldOutCoverage.Persons != 3 || wantRep.CorpusIndex == nil || len(wantRep.CorpusIndex.Persons) != 3 {
		t.Fatalf("prior.Fit: coverage %+v, index %+v: want three persons in both", wantRep.HeldOutCoverage, wantRep.CorpusIndex)
	}
	res, err := Fit(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Report.HeldOutCoverage; c == nil || c.Persons != 3 {
		t.Errorf("pipeline: held-out coverage %+v, want three persons (folds)", c)
	}
	x, err := trace.ReadCorpusIndexFile(prior.CorpusIndexPath(o.Output))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x, wantRep.CorpusIndex) {
		t.Errorf("pipeline: corpus index of persons %v, want prior.Fit's %v", x.Persons, wantRep.CorpusIndex.Persons)
	}
	var a bytes.Buffer
	if err := want.Write(&a); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(o.Output); err != nil || !bytes.Equal(a.Bytes(), b) {
		t.Errorf("pipeline prior (%v)\n%s\nprior.Fit\n%s", err, b, a.Bytes())
	}
	wantRep.Fits, wantRep.Workers, wantRep.CorpusIndex = nil, 0, nil
	if !reflect.DeepEqual(res.Report, wantRep) {
		t.Errorf("pipeline report\n%+v\nprior.Fit\n%+v", res.Report, wantRep)
	}
}

// TestSynthesizeJoinsPersons: the pipeline's trajectory database bounds a
// person whose files lie in two folders once (their first trajectory
// alone, at --max-seqs 1), as trajdb.FromFiles does on one machine: the
// same files byte for byte, and as many bounded trajectories. Before the
// join the person kept one trajectory per folder, two, and the database's
// user-level guarantee held for neither.
func TestSynthesizeJoinsPersons(t *testing.T) {
	root := splitPerson(t)
	singleMachineCorpus(t, root)
	o := testRelease(filepath.Join(root, "**", "*.plt"), filepath.Join(t.TempDir(), "pipeline"), "prefix", 5)
	o.MaxSeqs = 1
	want := t.TempDir()
	db, _ := singleRelease(t, root, want, o)
	if len(db.Users) != 3 || db.Len() != 3 {
		t.Fatalf("single machine: %d persons, %d bounded trajectories: want 3 and 3", len(db.Users), db.Len())
	}
	res, err := Synthesize(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bounded.Trajectories != int64(db.Len()) {
		t.Errorf("pipeline bounded %d trajectories, the single machine %d", res.Bounded.Trajectories, db.Len())
	}
	sameFiles(t, want, o.Output, SynthesisSeqFile, SynthesisCSVFile, SynthesisCertFile)
}

// TestSanitizeJoinsPersons: the pipeline's corpus release releases,
// certifies and charges a person whose files lie in two folders once,
// under one account: the manifest lists three persons, old-phone with
// both folders' files, and the ledger three accounts and three charges
// (the launcher checks synth-1's account too and charges it pending; the
// charge is undone once the job has run). A regression test: the job
// joined persons (corpus.GroupUnits) before issue 31's item 1 too.
func TestSanitizeJoinsPersons(t *testing.T) {
	root := splitPerson(t)
	singleMachineCorpus(t, root)
	ledger := filepath.Join(t.TempDir(), "ledger.json")
	f, err := budget.Open(ledger, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := testOptions(root, filepath.Join(t.TempDir(), "out"), 0)
	o.Seeded = false
	o.Admission = budget.NewAdmission(f, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: 1.5, Command: "test", Release: "pipeline join"})
	res, err := Sanitize(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, p := range res.Manifest.Persons {
		uids = append(uids, p.UID)
		if p.UID == "old-phone" && !reflect.DeepEqual(p.Files, []string{"old-phone/synth-1/Trajectory/lunch.plt", "synth-1/commute.plt"}) {
			t.Errorf("person old-phone: files %v, want both folders' files", p.Files)
		}
	}
	if !reflect.DeepEqual(uids, []string{"old-phone", "synth-2", "synth-3"}) {
		t.Fatalf("manifest persons %v, want old-phone, synth-2, synth-3", uids)
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	var accounts []string
	for _, a := range l.Accounts {
		accounts = append(accounts, a.UID)
	}
	slices.Sort(accounts)
	if !reflect.DeepEqual(accounts, uids) || len(l.Charges) != 3 {
		t.Errorf("ledger accounts %v and %d charges, want one account and one charge per person %v", accounts, len(l.Charges), uids)
	}
	for _, p := range res.Manifest.Persons {
		if a := l.Account(p.UID); a == nil || a.Spent != p.EpsilonMax {
			t.Errorf("person %s: account %+v, want spent the certified %v", p.UID, a, p.EpsilonMax)
		}
	}
}

// TestReadTracesJoinsPersons: traces read by ReadTraces over a corpus
// reach a user's SanitizeTraces with the persons joined, as the single
// machine reads them: three persons, old-phone with both of synth-1's
// traces; each is released once. Control: the same files read without
// AsCorpus are the input's one person, Q.
func TestReadTracesJoinsPersons(t *testing.T) {
	root := splitPerson(t)
	traces := singleMachineCorpus(t, root)
	files, _, err := Match(root)
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, tr := range traces {
		want = append(want, tr.UID)
	}
	p, s := beam.NewPipelineWithRoot()
	read := ReadTraces(s, beam.CreateList(s, files), Reading{AsCorpus: true, InputRoot: root})
	passert.Equals(s, beam.ParDo(s, traceUID, read), want...)
	released, failed := SanitizeTraces(s, read, testParams(2))
	passert.Equals(s, beam.ParDo(s, releaseUID, released), "old-phone", "synth-2", "synth-3")
	passert.Empty(s, failed)
	one := ReadTraces(s.Scope("one"), beam.CreateList(s, files), Reading{InputRoot: root})
	passert.Equals(s, beam.ParDo(s, traceUID, one), "Q", "Q", "Q", "Q")
	initBeam()
	if _, err := beam.Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
}

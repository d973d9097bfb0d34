package sanitize

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// writeCorpus lays out a small corpus: GeoLife-style user directories (one
// user's trace split over two files), a CSV of two people directly in the
// corpus directory (a file in a person's folder would be that person's),
// and a file that is not a trace.
func writeCorpus(t *testing.T) string {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(rel string, f trace.Format, ts ...*trace.Trace) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := trace.WriteFile(p, ts, f); err != nil {
			t.Fatal(err)
		}
	}
	part := func(uid string, lo, hi int) *trace.Trace {
		return &trace.Trace{UID: uid, Name: uid, Points: append([]trace.Point(nil), tr.Points[lo:hi]...)}
	}
	write("000/Trajectory/a.plt", trace.PLT, part("", 0, 100))
	write("000/Trajectory/b.plt", trace.PLT, part("", 110, 200))
	write("001/c.plt", trace.PLT, part("", 0, 150))
	write("people.csv", trace.CSV, part("alice", 0, 80), part("bob", 50, 160))
	os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not a trace\n"), 0o644)
	return dir
}

func corpusOptions(in, out string) CorpusOptions {
	p, _ := prior.Read(bytes.NewReader(sample.Prior))
	return CorpusOptions{In: in, Out: out, Read: trace.ReadOptions{},
		Release: Options{Prior: p, Epsilon: 1, Lambda: 2, Radius: 100, Source: noise.Seeded(9)}}
}

// A corpus release: people grouped across files, every file mirrored, one
// certificate per group, the manifest; a seeded person's output equals
// releasing that person alone; an interrupted run resumes; a run with other
// options into the same directory is refused.
func TestCorpus(t *testing.T) {
	t.Parallel()
	in := writeCorpus(t)
	out := filepath.Join(t.TempDir(), "rel")
	m, err := Corpus(corpusOptions(in, out))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Failed) != 0 || m.Files != 4 || len(m.Ignored) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	byUID := map[string]Released{}
	for _, p := range m.Persons {
		byUID[p.UID] = p
		if p.EpsilonMax > 1 {
			t.Errorf("%s: epsilon %v", p.UID, p.EpsilonMax)
		}
	}
	if len(byUID) != 4 || byUID["000"].Points != 190 || len(byUID["000"].Files) != 2 || byUID["alice"].Points != 80 || byUID["bob"].Points != 110 {
		t.Fatalf("people %+v", m.Persons)
	}
	for _, rel := range []string{"000/Trajectory/a.plt", "000/Trajectory/b.plt", "001/c.plt", "people.csv", ManifestName, byUID["000"].Certificate} {
		if _, err := os.Stat(filepath.Join(out, rel)); err != nil {
			t.Error(err)
		}
	}
	c, err := ReadCertificateFile(filepath.Join(out, byUID["000"].Certificate))
	if err != nil || len(c.Persons) != 1 || c.Persons[0].Points != 190 || len(c.Persons[0].Traces) != 2 {
		t.Fatalf("certificate of 000: %+v, %v", c, err)
	}

	// The same person released alone, same seed: the same bytes.
	var alone []*trace.Trace
	for _, f := range []string{"000/Trajectory/a.plt", "000/Trajectory/b.plt"} {
		ts, _, err := trace.ReadFile(filepath.Join(in, f), trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, ts...)
	}
	outs, _, err := Release(alone, corpusOptions(in, out).Release)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := trace.Write(&want, outs[:1], trace.PLT); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "000/Trajectory/a.plt")); !bytes.Equal(got, want.Bytes()) {
		t.Error("the corpus release of 000 differs from releasing 000 alone with the same seed")
	}

	// Interrupted: an output is gone; the rerun redoes that group only.
	before, _ := os.ReadFile(filepath.Join(out, "people.csv"))
	if err := os.Remove(filepath.Join(out, "001/c.plt")); err != nil {
		t.Fatal(err)
	}
	m2, err := Corpus(corpusOptions(in, out))
	if err != nil {
		t.Fatal(err)
	}
	if m2.Resumed != 2 || len(m2.Persons) != 4 {
		t.Errorf("resumed %d groups, %d people; want 2 of 3 groups resumed", m2.Resumed, len(m2.Persons))
	}
	if after, _ := os.ReadFile(filepath.Join(out, "people.csv")); !bytes.Equal(before, after) {
		t.Error("a finished group was released again")
	}
	if _, err := os.Stat(filepath.Join(out, "001/c.plt")); err != nil {
		t.Error("the missing output was not released again")
	}

	// Other options into the same directory: refused.
	o := corpusOptions(in, out)
	o.Release.Epsilon = 2
	var pe *param.Error
	if _, err := Corpus(o); !errors.As(err, &pe) || pe.Name != "out" {
		t.Errorf("resume with other options: %v", err)
	}
	// Output inside the input: refused.
	if _, err := Corpus(corpusOptions(in, filepath.Join(in, "rel"))); !errors.As(err, &pe) || pe.Name != "out" {
		t.Errorf("output inside the input: %v", err)
	}
}

// A CSV streamed in chunks gives the release and certificate Release gives
// for the same input and seed, byte for byte; a person whose rows are not
// contiguous is not streamable.
func TestStream(t *testing.T) {
	t.Parallel()
	var csv bytes.Buffer
	a, b := walk(700, 39.98, 116.30), walk(500, 39.97, 116.31)
	a.UID, b.UID = "alice", "bob"
	if err := trace.Write(&csv, []*trace.Trace{a, b}, trace.CSV); err != nil {
		t.Fatal(err)
	}
	open := func() (trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(csv.Bytes()), trace.CSV, trace.ReadOptions{Chunk: 64})
	}
	opt := options(familyPrior())
	s, scert, err := NewStream(open, opt)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := s.WriteTo(&got, trace.CSV); err != nil {
		t.Fatal(err)
	}
	r, _ := trace.NewReader(bytes.NewReader(csv.Bytes()), trace.CSV, trace.ReadOptions{})
	traces, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	outs, mcert, err := Release(traces, options(familyPrior()))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := trace.Write(&want, outs, trace.CSV); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the streamed release differs from Release's")
	}
	if len(scert.Persons) != 2 || scert.EpsilonMax != mcert.EpsilonMax || scert.Persons[0].SamplingJitter != mcert.Persons[0].SamplingJitter || scert.Persons[1].Points != 500 {
		t.Errorf("certificates differ: %+v / %+v", scert.Persons[0], mcert.Persons[0])
	}
	// bob's rows split around alice's: not streamable.
	var mixed bytes.Buffer
	b1, b2 := *b, *b
	b1.Points, b2.Points = b.Points[:200], b.Points[200:]
	trace.Write(&mixed, []*trace.Trace{&b1, a, &b2}, trace.CSV)
	open = func() (trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(mixed.Bytes()), trace.CSV, trace.ReadOptions{Chunk: 64})
	}
	if _, _, err := NewStream(open, options(familyPrior())); !errors.Is(err, ErrNotStreamable) {
		t.Errorf("interleaved people: %v", err)
	}
}

// The files of a corpus release keep their layout (manifest version 1):
// the manifest's keys, its persons' and failures', and the journal's lines,
// the options key first, then the group's record, which a resumed run reads
// back. The keys are the format's contract with its readers, listed here
// rather than derived from the types that write them.
func TestCorpusFileLayout(t *testing.T) {
	t.Parallel()
	in, out := writeCorpus(t), t.TempDir()
	// A file that cannot be read fails alone; the rest is released.
	if err := os.WriteFile(filepath.Join(in, "002.csv"), []byte("uid,lat\nx,not a number\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := corpusOptions(in, out)
	o.Read.Strict = true
	if _, err := Corpus(o); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	b, err := os.ReadFile(filepath.Join(out, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"epsilon_max", "epsilon_target", "failed", "files", "ignored_files", "lambda", "persons", "points", "prior_family",
		"radius_m", "randomness", "resumed_units", "seconds", "skipped_by_reason", "skipped_rows", "uid_rule", "version"}
	if got := keys(m); !slices.Equal(got, want) {
		t.Errorf("manifest keys %v, want %v", got, want)
	}
	if m["version"] != float64(1) {
		t.Errorf("manifest version %v", m["version"])
	}
	person := []string{"certificate", "epsilon_max", "files", "points", "uid"}
	for _, p := range m["persons"].([]any) {
		if got := keys(p.(map[string]any)); !slices.Equal(got, person) {
			t.Errorf("person keys %v, want %v", got, person)
		}
	}
	failed := m["failed"].([]any)
	if len(failed) != 1 {
		t.Fatalf("failed %v, want the unreadable file", failed)
	}
	if got := keys(failed[0].(map[string]any)); !slices.Equal(got, []string{"error", "files"}) {
		t.Errorf("failure keys %v (a file that cannot be read has no uids)", got)
	}
	if f := failed[0].(map[string]any); !reflect.DeepEqual(f["files"], []any{"002.csv"}) || strings.Contains(f["error"].(string), in) {
		t.Errorf("failure %v: want the file relative to the input, and no absolute path", f)
	}

	j, err := os.ReadFile(filepath.Join(out, corpus.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(j)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d journal lines, want one per group (3)", len(lines))
	}
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if got := keys(e); !slices.Equal(got, []string{"inputs", "options", "outputs", "persons", "skipped_by_reason", "skipped_rows"}) {
			t.Errorf("journal keys %v", got)
		}
		if !strings.HasPrefix(l, `{"options":"`) {
			t.Errorf("journal line %.40s...: the options key comes first", l)
		}
	}
}

// TestCorpusRandomness: the manifest names the source a release drew from;
// nil is crypto/rand, as in a certificate, and a seeded source says that
// each person's stream is derived from it.
func TestCorpusRandomness(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		src  noise.Source
		want string
	}{
		{"nil", nil, "crypto"},
		{"crypto", noise.Secure(), "crypto"},
		{"seeded", noise.Seeded(7), "seeded:7 (derived per person: seeded:N/uid)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := corpusRandomness(c.src); got != c.want {
				t.Errorf("corpusRandomness = %q, want %q", got, c.want)
			}
		})
	}
}

// A corpus release refuses an output directory holding a release it did
// not journal, before anything is written: a finished pipeline release (a
// manifest, no journal) and part of a killed one (the pipeline's marker),
// whose certificates settle that release's pending charges. Its control: an
// output it journalled itself resumes.
func TestCorpusRefusesForeignRelease(t *testing.T) {
	t.Parallel()
	in := writeCorpus(t)
	for _, foreign := range [][]string{{ManifestName}, {corpus.PipelineMarkerName}, {ManifestName, corpus.PipelineMarkerName}} {
		out := t.TempDir()
		for _, name := range foreign {
			if err := os.WriteFile(filepath.Join(out, name), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Corpus(corpusOptions(in, out))
		if pe := (*param.Error)(nil); !errors.As(err, &pe) || pe.Name != "out" {
			t.Errorf("an output holding %v: err %v, want a refusal naming out", foreign, err)
		}
		entries, _ := os.ReadDir(out)
		if len(entries) != len(foreign) {
			t.Errorf("an output holding %v: the refused run left %d entries there", foreign, len(entries))
		}
	}
	out := t.TempDir()
	for range 2 {
		if _, err := Corpus(corpusOptions(in, out)); err != nil {
			t.Fatalf("a release into its own output (the second run resumes): %v", err)
		}
	}
}

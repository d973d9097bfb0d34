package sanitize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// writeNested lays out files of the sample trace at rel paths under a new
// directory, each a slice [lo, hi) of its points, with uid (CSV) or none.
func writeNested(t *testing.T, files map[string][3]any) string {
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
	for rel, f := range files {
		uid, lo, hi := f[0].(string), f[1].(int), f[2].(int)
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		format, _ := trace.FormatFromPath(p)
		if err := trace.WriteFile(p, []*trace.Trace{{UID: uid, Points: append([]trace.Point(nil), tr.Points[lo:hi]...)}}, format); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCorpusPersons: who the persons of a corpus release are is the person
// rule's. One person's folder nested three deep (year/month/device) is one
// person with one certificate, declared one person or as a corpus's child
// folder; GeoLife's layout is one person per uid; a file directly in a
// corpus without a uid refuses the run before anything is written; the
// persons are told before anything is drawn.
func TestCorpusPersons(t *testing.T) {
	t.Parallel()
	nested := map[string][3]any{
		"q/008/2008/10/phone/a.plt": {"", 0, 60},
		"q/008/2008/11/watch/b.plt": {"", 60, 120},
		"q/008/2009/01/phone/c.plt": {"", 130, 170},
		"q/008/sub/d.csv":           {"someone", 180, 200},
	}
	dir := writeNested(t, nested)
	want := []trace.PersonCount{{UID: "008", Files: 4, Points: 180}}
	for _, c := range []struct {
		name string
		in   string
		one  bool
	}{{"one person", "q/008", true}, {"a corpus of one", "q", false}} {
		t.Run(c.name, func(t *testing.T) {
			o := corpusOptions(filepath.Join(dir, c.in), filepath.Join(t.TempDir(), "out"))
			o.OnePerson = c.one
			var told []trace.PersonCount
			o.Persons = func(ps []trace.PersonCount) error {
				told = ps
				if _, err := os.Stat(o.Out); err == nil {
					t.Error("the output directory exists before the persons were told")
				}
				return nil
			}
			ps, merged, err := CorpusPersons(o)
			if err != nil || !reflect.DeepEqual(ps, want) || len(merged) != 1 || merged[0].DataUID != "someone" || merged[0].Person != "008" {
				t.Fatalf("CorpusPersons: %+v, %+v, %v; want %+v and someone merged into 008", ps, merged, err, want)
			}
			m, err := Corpus(o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(told, want) {
				t.Errorf("told %+v, want %+v", told, want)
			}
			if len(m.Persons) != 1 || m.Persons[0].UID != "008" || m.Persons[0].Points != 180 || len(m.Persons[0].Files) != 4 || len(m.Failed) != 0 {
				t.Fatalf("manifest persons %+v, failed %+v", m.Persons, m.Failed)
			}
			cert, err := ReadCertificateFile(filepath.Join(o.Out, m.Persons[0].Certificate))
			if err != nil || len(cert.Persons) != 1 || cert.Persons[0].UID != "008" || len(cert.Persons[0].Traces) != 4 {
				t.Fatalf("certificate %+v, %v", cert, err)
			}
			certs, _ := os.ReadDir(filepath.Join(o.Out, CertificatesDir))
			if len(certs) != 1 {
				t.Errorf("%d certificates, want 1", len(certs))
			}
		})
	}

	// GeoLife's Data folder: one person per uid, whatever is below it.
	geo := writeNested(t, map[string][3]any{
		"Data/000/Trajectory/a.plt":      {"", 0, 50},
		"Data/000/Trajectory/2008/b.plt": {"", 50, 100},
		"Data/001/Trajectory/c.plt":      {"", 0, 70},
		"Data/002/Trajectory/x/y/d.plt":  {"", 100, 130},
	})
	o := corpusOptions(filepath.Join(geo, "Data"), filepath.Join(t.TempDir(), "out"))
	ps, _, err := CorpusPersons(o)
	if want := []trace.PersonCount{{UID: "000", Files: 2, Points: 100}, {UID: "001", Files: 1, Points: 70}, {UID: "002", Files: 1, Points: 30}}; err != nil || !reflect.DeepEqual(ps, want) {
		t.Errorf("GeoLife persons %+v, %v; want %+v", ps, err, want)
	}
	o.In = filepath.Join(geo, "Data/000/Trajectory")
	o.OnePerson = true
	if ps, _, err := CorpusPersons(o); err != nil || !reflect.DeepEqual(ps, []trace.PersonCount{{UID: "000", Files: 2, Points: 100}}) {
		t.Errorf("Data/000/Trajectory: %+v, %v", ps, err)
	}
	o.OnePerson = false
	if _, _, err := CorpusPersons(o); !errors.Is(err, trace.ErrNoPerson) {
		t.Errorf("Data/000/Trajectory as a corpus: %v, want ErrNoPerson", err)
	}

	// A file of no person directly in a corpus: refused, nothing written;
	// a CSV of uids there names its persons.
	loose := writeNested(t, map[string][3]any{"u1/a.plt": {"", 0, 40}, "b.plt": {"", 40, 80}, "c.csv": {"ann", 80, 90}})
	o = corpusOptions(loose, filepath.Join(t.TempDir(), "out"))
	if _, err := Corpus(o); !errors.Is(err, trace.ErrNoPerson) || !bytes.Contains([]byte(err.Error()), []byte("b.plt")) {
		t.Errorf("a loose file: %v", err)
	}
	if _, err := os.Stat(o.Out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused corpus wrote %s: %v", o.Out, err)
	}
	os.Remove(filepath.Join(loose, "b.plt"))
	if ps, _, err := CorpusPersons(o); err != nil || !reflect.DeepEqual(ps, []trace.PersonCount{{UID: "ann", Files: 1, Points: 10}, {UID: "u1", Files: 1, Points: 40}}) {
		t.Errorf("a CSV of uids in the corpus: %+v, %v", ps, err)
	}
	// A uid names one person, never a corpus's.
	o.Read.UID = "x"
	var pe *param.Error
	if _, err := Corpus(o); !errors.As(err, &pe) || pe.Name != "uid" {
		t.Errorf("a corpus with a uid: %v", err)
	}
	// The caller's refusal writes nothing.
	o.Read.UID = ""
	o.Persons = func([]trace.PersonCount) error { return errors.New("no") }
	if _, err := Corpus(o); err == nil || err.Error() != "no" {
		t.Errorf("refused by the caller: %v", err)
	}
	if _, err := os.Stat(o.Out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a corpus the caller refused wrote %s: %v", o.Out, err)
	}
}

package trajdb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// TestReleaseRoundTrip writes releases with WriteSynthesis and reads them
// back with ReadSynthesis: the same certificate and sequences, on a grid and
// on an alphabet numbered from 1.
func TestReleaseRoundTrip(t *testing.T) {
	t.Parallel()
	box, err := trace.ParseBBox("39.75,116.15,40.10,116.60")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrid(box, 10000)
	if err != nil {
		t.Fatal(err)
	}
	b := Bounds{MaxLen: 3, MaxSeqs: 1}
	for _, tc := range []struct {
		name string
		g    *Grid
		size int
		base int
	}{{"grid", g, g.Size(), 0}, {"symbols", nil, 3, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			db := &DB{Size: tc.size}
			for i := range 60 {
				db.Users = append(db.Users, User{ID: fmt.Sprint(i), Seqs: [][]int{{i % 2, 1 + i%2}}})
			}
			m := &Prefix{Contribution: b}
			rel, err := m.Synthesize(db, 2, noise.Seeded(3))
			if err != nil {
				t.Fatal(err)
			}
			if len(rel.Seqs) == 0 {
				t.Fatal("empty release: pick another seed")
			}
			c := NewCertificate(m, rel, 2, tc.g, tc.size, MapOptions{}, noise.Seeded(3))
			dir := filepath.Join(t.TempDir(), "rel")
			if _, err := WriteSynthesis(dir, c, tc.base); err != nil {
				t.Fatal(err)
			}
			back, err := ReadSynthesis(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Seqs, c.Seqs) {
				t.Errorf("sequences %v, wrote %v", back.Seqs, c.Seqs)
			}
			if back.Base != tc.base || back.Alphabet != c.Alphabet || back.Epsilon != 2 || back.Mechanism != "prefix" || back.Bounds != b {
				t.Errorf("certificate %+v", back)
			}
			if !back.SameSpace(tc.g, tc.size) || back.SameSpace(nil, tc.size+1) {
				t.Error("SameSpace")
			}
			if tc.g != nil && back.Universe.String() != tc.g.String() {
				t.Errorf("universe %s, wrote %s", back.Universe, tc.g)
			}
			// A sequence file that lost a line no longer matches its
			// certificate.
			seq := filepath.Join(dir, SeqFile)
			raw, _ := os.ReadFile(seq)
			lines := strings.SplitAfter(strings.TrimSpace(string(raw)), "\n")
			if err := os.WriteFile(seq, []byte(strings.Join(lines[1:], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadSynthesis(dir); err == nil || !strings.Contains(err.Error(), "sequences") {
				t.Errorf("truncated release read: %v", err)
			}
		})
	}
}

// TestReadCertificateRejects checks that what is not a version-1 release
// certificate is refused with the file named.
func TestReadCertificateRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"version": `{"version": 2, "mechanism": "prefix", "alphabet": 3, "levels": []}`,
		"other":   `{"version": 1, "persons": []}`,
		"syntax":  `{"version": 1,`,
	} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCertificateFile(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestBoundsJSONKeys: release.json writes the bounds in snake_case like
// every other key (issue 32: "bounds": {"MaxLen": ...}), and a release
// written before still reads.
func TestBoundsJSONKeys(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Bounds{MaxLen: 20, MaxSeqs: 1})
	if err != nil || string(b) != `{"max_len":20,"max_seqs":1}` {
		t.Errorf("Bounds JSON = %s, %v", b, err)
	}
	for _, in := range []string{`{"max_len":20,"max_seqs":1}`, `{"MaxLen":20,"MaxSeqs":1}`} {
		var got Bounds
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != (Bounds{20, 1}) {
			t.Errorf("%s read as %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{`{"max_len":20,"MaxLen":21}`, `{"max_len":20,"max_seq":1}`} {
		var got Bounds
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("%s read as %+v", in, got)
		}
	}
}

package pipeline

import (
	"bytes"
	"context"
	"encoding/gob"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

func init() {
	register.DoFn2x1[[]byte, func(*string, *int64) bool, error](&dumpCountsFn{})
}

// dumpCountsFn writes the aggregated node counts to a file (gob: the keys
// are binary), for the tests to read.
type dumpCountsFn struct{ Path string }

func (f *dumpCountsFn) ProcessElement(_ []byte, counts func(*string, *int64) bool) error {
	m := map[string]int64{}
	var k string
	var v int64
	for counts(&k, &v) {
		m[k] = v
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(m); err != nil {
		return err
	}
	return os.WriteFile(f.Path, b.Bytes(), 0o644)
}

// testRelease are the release options of the comparisons: Beijing's box
// (public, from the command's example) in 1 km cells, bounds loose
// enough that people keep several trajectories.
// testBBox is the public box of the test releases, as --bbox takes it.
const testBBox = "39.75,116.15,40.10,116.60"

func testRelease(in, out, mechanism string, seed uint64) SynthesizeOptions {
	box, err := trace.ParseBBox(testBBox)
	if err != nil {
		panic(err)
	}
	return SynthesizeOptions{Input: in, Output: out, Mechanism: trajdb.MechanismName(mechanism), Epsilon: 2, CellM: 1000,
		BBox: box, MaxLen: 8, MaxSeqs: 20, NMax: 3, Seeded: true, Seed: seed}
}

// singleRelease releases the traces under root as `tracepriv release --in
// root --seed N` does on one machine (trajdb.FromFiles, Bound, the
// mechanism's Release, the three files), into out, and returns the
// bounded database and the mapping's report.
func singleRelease(t testing.TB, root, out string, o SynthesizeOptions) (*trajdb.DB, *trajdb.MapReport) {
	t.Helper()
	o.withDefaults()
	c := releaseConfig{SynthesizeOptions: o}
	g, err := c.grid()
	if err != nil {
		t.Fatal(err)
	}
	ro, err := c.Reading.options()
	if err != nil {
		t.Fatal(err)
	}
	db, rep, err := trajdb.FromFiles(g, []string{root}, ro, trajdb.MapOptions{MaxGap: o.MaxGap, MinLen: o.MinLen})
	if err != nil {
		t.Fatal(err)
	}
	bd, err := trajdb.Bound(db, c.bounds())
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.mechanism()
	if err != nil {
		t.Fatal(err)
	}
	src := noise.Seeded(o.Seed)
	rel, err := m.Synthesize(bd, o.Epsilon, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := trajdb.WriteSynthesis(out, newReleaseCert(&c, g, m, rel, src), 0); err != nil {
		t.Fatal(err)
	}
	return bd, rep
}

// referenceCounts counts the nodes of a mechanism's tree over a bounded
// database by their definitions, by brute force: a prefix counts the
// sequences that begin with it; a gram its occurrences, and its end bin
// the occurrences that end their sequence (grams shorter than n_max).
func referenceCounts(db *trajdb.DB, mechanism string, nmax int) map[string]int64 {
	seqs := db.Sequences()
	nodes := map[string][]int{}
	for _, s := range seqs {
		for i := range s {
			for j := i + 1; j <= len(s); j++ {
				nodes[trajdb.Key(s[i:j])] = s[i:j]
			}
		}
	}
	out := map[string]int64{}
	for k, g := range nodes {
		var prefix, gram, end int64
		for _, s := range seqs {
			if len(s) >= len(g) && slices.Equal(s[:len(g)], g) {
				prefix++
			}
			for j := 0; j+len(g) <= len(s); j++ {
				if slices.Equal(s[j:j+len(g)], g) {
					gram++
				}
			}
			if len(g) < nmax && len(s) >= len(g) && slices.Equal(s[len(s)-len(g):], g) {
				end++
			}
		}
		switch mechanism {
		case "prefix":
			if prefix > 0 {
				out[string(kindPrefix)+k] = prefix
			}
		case "ngram":
			if len(g) <= nmax {
				out[string(kindGram)+k] = gram
				if end > 0 {
					out[string(kindEnd)+k] = end
				}
			}
		}
	}
	return out
}

// TestReleaseCounts: on GeoLife, the node counts Beam aggregates over
// persons bounded one by one are the counts of the bounded database
// trajdb builds on one machine, exactly, for both trees.
func TestReleaseCounts(t *testing.T) {
	root := geolife(t)
	for _, mech := range []string{"prefix", "ngram"} {
		t.Run(mech, func(t *testing.T) {
			o := testRelease(filepath.Join(root, "**", "*.plt"), t.TempDir(), mech, 1)
			db, _ := singleRelease(t, root, t.TempDir(), o)
			o.withDefaults()
			c := releaseConfig{SynthesizeOptions: o}
			dump := filepath.Join(t.TempDir(), "counts.gob")
			initBeam()
			p, s := beam.NewPipelineWithRoot()
			counts, _ := aggregate(s, c)
			beam.ParDo0(s, &dumpCountsFn{Path: dump}, beam.Impulse(s), beam.SideInput{Input: counts})
			if _, err := Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(dump)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]int64
			if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&got); err != nil {
				t.Fatal(err)
			}
			want := referenceCounts(db, mech, c.nmax())
			if len(db.Users) != 8 || db.Len() < 50 {
				t.Fatalf("bounded database: %d people, %d trajectories", len(db.Users), db.Len())
			}
			bad := 0
			for k, n := range want {
				if got[k] != n {
					if bad++; bad <= 5 {
						t.Errorf("node %c %v: Beam counted %d, want %d", k[0], trajdb.FromKey(k[1:]), got[k], n)
					}
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok {
					if bad++; bad <= 5 {
						t.Errorf("node %c %v: Beam counted %d, not a node of the data", k[0], trajdb.FromKey(k[1:]), n)
					}
				}
			}
			t.Logf("%d nodes from %d trajectories of %d people; %d differ", len(want), db.Len(), len(db.Users), bad)
		})
	}
}

// TestReleaseGeoLife: a seeded release on Prism is the single machine's,
// byte for byte (sequences, CSV and release.json), for both mechanisms,
// and the counters account for the input as trajdb.FromFiles does.
func TestReleaseGeoLife(t *testing.T) {
	root := geolife(t)
	for _, mech := range []string{"prefix", "ngram"} {
		t.Run(mech, func(t *testing.T) {
			want := t.TempDir()
			o := testRelease(filepath.Join(root, "**", "*.plt"), filepath.Join(t.TempDir(), "out"), mech, 7)
			_, rep := singleRelease(t, root, want, o)
			res, err := Synthesize(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			sameFiles(t, want, o.Output, SynthesisSeqFile, SynthesisCSVFile, SynthesisCertFile)
			rep.Read = nil
			if res.Input != *rep {
				t.Errorf("input report\n%+v\nFromFiles\n%+v", res.Input, *rep)
			}
			if res.Cert.Trajectories == 0 || res.Cert.Randomness != "seeded:7" || res.Cert.EpsilonSpent > o.Epsilon*(1+1e-12) {
				t.Errorf("release.json: %d trajectories, randomness %q, epsilon spent %v", res.Cert.Trajectories, res.Cert.Randomness, res.Cert.EpsilonSpent)
			}
		})
	}
}

// sameFiles checks that the named files of two directories are equal.
func sameFiles(t *testing.T, want, got string, names ...string) {
	t.Helper()
	for _, name := range names {
		a, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the pipeline's release differs from the single machine's (%d and %d bytes)", name, len(b), len(a))
		}
	}
}

// TestReleaseDirty: an unreadable file is skipped and counted, as
// trajdb.FromFiles skips it, and the rest released as on one machine;
// with --strict it stops the release, which writes nothing; an output
// inside the input or holding a release is refused.
func TestReleaseDirty(t *testing.T) {
	in := copyGeoLife(t, "000/20081023025304.plt", "000/20081024020959.plt", "004/20081024015454.plt")
	os.MkdirAll(filepath.Join(in, "bad"), 0o755)
	if err := os.WriteFile(filepath.Join(in, "bad", "cut.plt"), []byte("not a PLT header\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := t.TempDir()
	o := testRelease(in, filepath.Join(t.TempDir(), "out"), "prefix", 3)
	_, rep := singleRelease(t, in, want, o)
	if len(rep.Read.SkippedFiles) != 1 {
		t.Fatalf("the single machine skipped %d files", len(rep.Read.SkippedFiles))
	}
	res, err := Synthesize(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unreadable != 1 {
		t.Errorf("%d unreadable files counted, want 1", res.Unreadable)
	}
	sameFiles(t, want, o.Output, SynthesisSeqFile, SynthesisCSVFile, SynthesisCertFile)

	strict := o
	strict.Strict, strict.Output = true, filepath.Join(t.TempDir(), "strict")
	if _, err := Synthesize(context.Background(), strict); err == nil || !strings.Contains(err.Error(), "cut.plt") {
		t.Errorf("strict: %v", err)
	}
	if fileExists(filepath.Join(strict.Output, SynthesisCertFile)) {
		t.Error("a failed release wrote its certificate")
	}
	if _, err := Synthesize(context.Background(), o); err == nil || !strings.Contains(err.Error(), "holds a release") {
		t.Errorf("output holding a release: %v", err)
	}
	inside := o
	inside.Output = filepath.Join(in, "000", "out")
	if _, err := Synthesize(context.Background(), inside); err == nil || !strings.Contains(err.Error(), "inside the input") {
		t.Errorf("output inside the input: %v", err)
	}
}

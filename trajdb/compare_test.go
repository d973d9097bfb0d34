package trajdb

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// compareDB is a small symbolic database: 30 persons over 5 symbols, each
// with two short sequences drawn around a common route.
func compareDB(t *testing.T) *DB {
	t.Helper()
	src := noise.Seeded(3)
	db := &DB{Size: 5}
	for p := range 30 {
		u := &User{ID: string(rune('a'+p%26)) + string(rune('0'+p/26))}
		for range 2 {
			start := int(noise.Bits(src, 2)) % 3
			u.Seqs = append(u.Seqs, []int{start, start + 1, start + 2})
		}
		db.Users = append(db.Users, *u)
	}
	return db
}

// TestCompare recomputes the release's metrics and the non-private
// baseline by Evaluate on their own, and the verdict by NotBetter: a
// comparison that measured the wrong side or mixed up the baselines fails.
func TestCompare(t *testing.T) {
	db := compareDB(t)
	b := Bounds{MaxLen: 2, MaxSeqs: 1}
	bounded, err := NonPrivateBaseline(db, b)
	if err != nil {
		t.Fatal(err)
	}
	released := bounded[:20]
	opt := CompareOptions{Metrics: MetricOptions{Size: 5, QuerySeed: 1}, Bounds: b, Src: noise.Seeded(1)}
	var steps []int
	opt.Progress = func(done, total int, _ string) { steps = append(steps, done) }
	c, err := Compare(db, released, opt)
	if err != nil {
		t.Fatal(err)
	}
	if c.UniformDraws != AutoUniformDraws(len(released)) || c.UniformDraws != 10 {
		t.Errorf("uniform draws %d, want %d", c.UniformDraws, AutoUniformDraws(len(released)))
	}
	if len(steps) != 1+c.UniformDraws+2 || steps[len(steps)-1] != 1+c.UniformDraws+2 {
		t.Errorf("progress steps %v", steps)
	}
	mopt := opt.Metrics
	mopt.Persons = len(db.Users)
	want, err := Evaluate(db.Sequences(), released, mopt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Metrics, want) {
		t.Errorf("release metrics %+v, want %+v", c.Metrics, want)
	}
	np, err := Evaluate(db.Sequences(), bounded, mopt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Baselines[BaselineNonPrivate], np) {
		t.Errorf("non-private baseline %+v, want %+v", c.Baselines[BaselineNonPrivate], np)
	}
	if nb := want.NotBetter(c.Baselines[BaselineUniform]); len(nb) != len(c.NotBetterThanUniform) || c.BeatsUniform != (len(nb) == 0) {
		t.Errorf("not better than uniform %v (beats %v), want %v", c.NotBetterThanUniform, c.BeatsUniform, nb)
	}
	if c.Against != "all" {
		t.Errorf("against %q", c.Against)
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil || !strings.Contains(buf.String(), "20 released vs 60 real trajectories (all)") {
		t.Errorf("WriteText = %q, %v", buf.String(), err)
	}
	if _, err := Compare(db, released, CompareOptions{Metrics: opt.Metrics, Bounds: b, UniformDraws: -1}); err == nil {
		t.Error("UniformDraws -1 accepted")
	}
	if n := AutoUniformDraws(400_000); n != 2 {
		t.Errorf("AutoUniformDraws(400000) = %d, want 2", n)
	}
	if math.IsNaN(c.Baselines[BaselineUniform].QueryARE) {
		t.Error("uniform baseline not measured")
	}
}

// TestReadReleasedSequences reads a release back, refuses it on another
// alphabet, reads a bare sequence file, and says when a directory holds
// neither.
func TestReadReleasedSequences(t *testing.T) {
	db := compareDB(t)
	b := Bounds{MaxLen: 2, MaxSeqs: 1}
	m, err := NewMechanism(MechanismPrefix, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	bd, err := Bound(db, b)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := m.Synthesize(bd, 1, noise.Seeded(2))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "rel")
	if _, err := WriteSynthesis(out, NewCertificate(m, rel, 1, nil, 5, MapOptions{}, noise.Seeded(2)), 0); err != nil {
		t.Fatal(err)
	}
	seqs, cert, found, err := ReadReleasedSequences(out, nil, 5, 0)
	if err != nil || !found || cert == nil || !reflect.DeepEqual(seqs, rel.Seqs) {
		t.Fatalf("read back: %d seqs, cert %v, found %v, %v", len(seqs), cert != nil, found, err)
	}
	if _, _, _, err := ReadReleasedSequences(out, nil, 6, 0); !errors.Is(err, ErrOtherSpace) {
		t.Errorf("another alphabet: %v, want ErrOtherSpace", err)
	}
	bare := filepath.Join(dir, "bare.seq")
	if err := os.WriteFile(bare, []byte("0 1\n2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if seqs, cert, found, err := ReadReleasedSequences(bare, nil, 5, 0); err != nil || !found || cert != nil || len(seqs) != 2 {
		t.Errorf("bare file: %v, %v, %v, %v", seqs, cert, found, err)
	}
	if _, _, found, err := ReadReleasedSequences(t.TempDir(), nil, 5, 0); found || err != nil {
		t.Errorf("empty directory: found %v, %v", found, err)
	}
}

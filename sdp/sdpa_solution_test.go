package sdp

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// An SDPASolution written by WriteSDPASolution reads back to the same
// layout, with the blocks of X and Z restored as matrices.
func TestSDPASolutionRoundTrip(t *testing.T) {
	f, err := os.Open("testdata/example1.dat-s")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadSDPA(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, err := SolveSDPA(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSDPASolution(&buf, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("}\n")) || !strings.Contains(buf.String(), `"version": 1`) {
		t.Errorf("layout:\n%s", buf.String())
	}
	got, err := ReadSDPASolution(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := NewSDPASolution(res)
	if got.Version != SDPASolutionVersion || got.Status != res.Status || !reflect.DeepEqual(got.Y, res.Y) ||
		!reflect.DeepEqual(got.X, want.X) || !reflect.DeepEqual(got.Z, want.Z) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if got.Result.PrimalObj != res.PrimalObj || got.Result.DualObj != res.DualObj || got.Result.Iterations != res.Iterations {
		t.Errorf("result %+v, want %+v", got.Result, res)
	}
	if len(got.Result.X) != len(res.X) || len(got.Result.Z) != len(res.Z) {
		t.Fatalf("%d X and %d Z blocks, want %d", len(got.Result.X), len(got.Result.Z), len(res.X))
	}
	for k := range res.X {
		if !mat.Equal(got.Result.X[k], res.X[k]) || !mat.Equal(got.Result.Z[k], res.Z[k]) {
			t.Errorf("block %d differs", k+1)
		}
	}
	// Writing what was read gives the same bytes.
	var again bytes.Buffer
	if err := WriteSDPASolution(&again, got.Result); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("second write differs:\n%s\nvs\n%s", again.String(), buf.String())
	}

	for _, c := range []struct{ name, edit, want string }{
		{"version", strings.Replace(buf.String(), `"version": 1`, `"version": 2`, 1), "version 2"},
		{"ragged", strings.NewReplacer(`"x": [`, `"x": [[[1, 2], [3]], `, `"z": [`, `"z": [[[1]], `).Replace(buf.String()), "X block 1: row 2"},
		{"not JSON", "{", "sdp solution"},
		{"status", strings.Replace(buf.String(), `"status": "optimal"`, `"status": "fine"`, 1), `unknown SDP status "fine"`},
		{"huge status", strings.Replace(buf.String(), `"status": "optimal"`, `"status": "`+strings.Repeat("f", 1<<20)+`"`, 1), `unknown SDP status "` + strings.Repeat("f", 40) + `"… (1048576 bytes)`},
	} {
		if _, err := ReadSDPASolution(strings.NewReader(c.edit)); err == nil || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 200 {
			t.Errorf("%s: err = %.300v, want at most 200 bytes with %q", c.name, err, c.want)
		}
	}
}

// Every Status reads back from its name.
func TestStatusText(t *testing.T) {
	for s := Optimal; s <= NumericalProblems; s++ {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Status
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Errorf("%s: read %v, %v", b, got, err)
		}
	}
	var got Status
	if err := got.UnmarshalText([]byte("Status(9)")); err == nil {
		t.Error("an unknown status read")
	}
}

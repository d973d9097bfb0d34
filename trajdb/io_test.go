package trajdb

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadSequences(t *testing.T) {
	t.Parallel()
	// An MSNBC-like file: 1-based category ids, a comment header, trailing
	// spaces; commas work too.
	in := "\uFEFF% Sequences:\n\n1 1 \n2\n# comment\n3,2,2, 4\n17\n"
	db, err := ReadSequences(strings.NewReader(in), SeqOptions{Base: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := &DB{Size: 17, Users: []User{
		{ID: "3", Seqs: [][]int{{0, 0}}},
		{ID: "4", Seqs: [][]int{{1}}},
		{ID: "6", Seqs: [][]int{{2, 1, 1, 3}}},
		{ID: "7", Seqs: [][]int{{16}}},
	}}
	if !reflect.DeepEqual(db, want) {
		t.Errorf("got %+v\nwant %+v", db, want)
	}
	// The alphabet given by the user wins over the data.
	db, err = ReadSequences(strings.NewReader("0 1\n"), SeqOptions{Size: 68})
	if err != nil || db.Size != 68 {
		t.Errorf("Size 68: got %v, %v", db, err)
	}
	// Person ids: lines of one id are one person's sequences.
	db, err = ReadSequences(strings.NewReader("ann: 1 2\nbob:3\nann : 4,5\n"), SeqOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantU := []User{{ID: "ann", Seqs: [][]int{{1, 2}, {4, 5}}}, {ID: "bob", Seqs: [][]int{{3}}}}
	if !reflect.DeepEqual(db.Users, wantU) || db.Size != 6 {
		t.Errorf("persons: got %+v (size %d), want %+v (size 6)", db.Users, db.Size, wantU)
	}
}

func TestReadSequencesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		opt  SeqOptions
		want string
	}{
		{"1 2\nfrontpage news\n", SeqOptions{}, `in:2: field 1: "frontpage" is not an integer`},
		{"1 2 x\n", SeqOptions{}, `in:1: field 3`},
		{"0 1\n", SeqOptions{Base: 1}, "below the first id 1"},
		{"1 68\n", SeqOptions{Size: 68}, "outside the alphabet of 68 symbols"},
		{"a: 1\n2\n", SeqOptions{}, "one convention"},
		{"a:\n", SeqOptions{}, "no symbols"},
		{": 1\n", SeqOptions{}, "empty person id"},
		{"# only a comment\n", SeqOptions{}, "no sequences"},
		{"5000000\n", SeqOptions{}, "renumber"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			tc.opt.Name = "in"
			_, err := ReadSequences(strings.NewReader(tc.in), tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadSequences(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
	_, err := ReadSequences(strings.NewReader("1 x\n"), SeqOptions{})
	var se *SeqError
	if !errors.As(err, &se) || se.Line != 1 || se.Field != 2 {
		t.Errorf("error %v is not a *SeqError at line 1, field 2", err)
	}
}

func TestSequencesRoundTrip(t *testing.T) {
	t.Parallel()
	db := &DB{Size: 20, Users: []User{
		{ID: "p1", Seqs: [][]int{{0, 19, 3}, {4}}},
		{ID: "p 2", Seqs: [][]int{{7, 7, 7}}},
	}}
	for _, opt := range []SeqOptions{{Size: 20, Persons: true}, {Size: 20, Persons: true, Base: 1}, {Size: 20}} {
		var buf bytes.Buffer
		if err := WriteSequences(&buf, db, opt); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSequences(&buf, opt)
		if err != nil {
			t.Fatal(err)
		}
		if opt.Persons {
			if !reflect.DeepEqual(got, db) {
				t.Errorf("%+v: round trip %+v, want %+v", opt, got, db)
			}
		} else if !reflect.DeepEqual(got.Sequences(), db.Sequences()) || got.Len() != 3 || got.Size != 20 {
			t.Errorf("%+v: round trip %v, want %v", opt, got.Sequences(), db.Sequences())
		}
	}
	path := filepath.Join(t.TempDir(), "db.txt")
	if err := WriteSequencesFile(path, db, SeqOptions{Persons: true}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSequencesFile(path, SeqOptions{Size: 20})
	if err != nil || !reflect.DeepEqual(got, db) {
		t.Errorf("file round trip: %+v, %v", got, err)
	}
	// Ids that would not read back are refused.
	for _, id := range []string{"a:b", "", " a", "#a"} {
		bad := &DB{Size: 2, Users: []User{{ID: id, Seqs: [][]int{{1}}}}}
		if err := WriteSequences(&bytes.Buffer{}, bad, SeqOptions{Persons: true}); err == nil {
			t.Errorf("person id %q written", id)
		}
	}
	if err := WriteSequences(&bytes.Buffer{}, &DB{Size: 2, Users: []User{{ID: "a", Seqs: [][]int{{2}}}}}, SeqOptions{}); err == nil {
		t.Error("symbol outside the alphabet written")
	}
	if s := SeqDB(5, [][]int{{1}, {2, 3}}); s.Len() != 2 || len(s.Users) != 2 || s.Size != 5 {
		t.Errorf("SeqDB = %+v", s)
	}
}

package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type doc struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
}

func TestRoundTripAndStrictness(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, doc{Version: 2, Name: "a<b"}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "{\n  \"version\": 2,\n  \"name\": \"a\\u003cb\"\n}\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	var d doc
	if err := DecodeVersion(b.Bytes(), 2, &d); err != nil || d.Name != "a<b" {
		t.Fatalf("read back %+v: %v", d, err)
	}
	for name, c := range map[string]struct {
		data string
		want int
	}{
		"unknown field": {`{"version": 2, "nmae": "x"}`, 2},
		"trailing data": {`{"version": 2} {}`, 2},
		"syntax":        {`{"version": 2,`, 2},
		"version":       {`{"version": 1, "name": "x"}`, 2},
	} {
		err := DecodeVersion([]byte(c.data), c.want, &d)
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if (name == "version") != errors.Is(err, ErrVersion) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Decode([]byte(`{"version": 1} `), &d); err != nil {
		t.Errorf("trailing space refused: %v", err)
	}
}

// UnknownField reads the field from the error encoding/json really returns
// (so that a new Go release changing the text fails here), and no other
// error is taken for one.
func TestUnknownField(t *testing.T) {
	var v struct{ A int }
	d := json.NewDecoder(strings.NewReader(`{"A": 1, "b c": 2}`))
	d.DisallowUnknownFields()
	err := d.Decode(&v)
	if f, ok := UnknownField(err); !ok || f != "b c" {
		t.Fatalf("UnknownField(%v) = %q, %v; want \"b c\", true", err, f, ok)
	}
	// Negative controls: a syntax error, a type error, nil.
	for _, in := range []string{`{"A": }`, `{"A": "x"}`} {
		d := json.NewDecoder(strings.NewReader(in))
		d.DisallowUnknownFields()
		if err := d.Decode(&v); err == nil {
			t.Fatalf("%s decoded", in)
		} else if f, ok := UnknownField(err); ok {
			t.Errorf("UnknownField(%v) = %q, true; want false", err, f)
		}
	}
	if _, ok := UnknownField(nil); ok {
		t.Error("UnknownField(nil) is true")
	}
}

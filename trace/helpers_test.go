package trace

import (
	"strings"
	"testing"
)

// read parses input in format f with options opt.
func read(t testing.TB, f Format, input string, opt ReadOptions) ([]*Trace, *Report, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(input), f, opt)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := ReadAll(r)
	return traces, r.Report(), err
}

const pltHead = "Geolife trajectory\r\nWGS 84\r\nAltitude is in Feet\r\nReserved 3\r\n0,2,255,My Track,0,0,2,8421376\r\n0\r\n"

// pltRows are three fixes in GeoLife's PLT layout (made-up positions, no
// GeoLife data).
const pltRows = "39.930702,116.376417,0,492,39744.1201851852,2008-10-23,02:53:04\r\n" +
	"39.930683,116.37645,0,492,39744.1202546296,2008-10-23,02:53:10\r\n" +
	"39.930686,116.376417,0,-777,39744.1203125,2008-10-23,02:53:15\r\n"

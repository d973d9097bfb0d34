package trace

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// fuzzRead reads data in format f, strictly and leniently, and checks the
// reader's contract: no panic, every error a *ParseError (the input is in
// memory, so there are no I/O errors), lenient mode counting what it skips,
// and whatever was read surviving a write and a second read.
func fuzzRead(t *testing.T, f Format, data []byte) {
	for _, strict := range []bool{true, false} {
		r, _ := NewReader(bytes.NewReader(data), f, ReadOptions{Name: "fuzz", Strict: strict})
		var traces []*Trace
		for {
			tr, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("strict=%v: error %v (%T) is not a *ParseError", strict, err, err)
				}
				traces = nil
				break
			}
			traces = append(traces, tr)
		}
		rep := r.Report()
		if strict && rep.Skipped != 0 {
			t.Fatalf("strict reader skipped %d records", rep.Skipped)
		}
		// Every problem is a row skipped or merged, but for the note of a
		// document cut between rows.
		cut := 0
		if rep.Truncated {
			cut = 1
		}
		if len(rep.Problems) > rep.SkippedRows()+cut {
			t.Fatalf("%d problems for %d rows skipped or merged", len(rep.Problems), rep.SkippedRows())
		}
		sum := 0
		for _, v := range rep.ByReason() {
			sum += v
		}
		if sum != rep.SkippedRows() {
			t.Fatalf("by reason %v does not add up to %d", rep.ByReason(), rep.SkippedRows())
		}
		n := 0
		for _, tr := range traces {
			n += tr.Len()
			for _, p := range tr.Points {
				if p.Lat < -90 || p.Lat > 90 || p.Lon < -180 || p.Lon > 180 || math.IsInf(p.Alt, 0) {
					t.Fatalf("reader returned an invalid point %+v", p)
				}
			}
		}
		if traces != nil && n != rep.Read {
			t.Fatalf("report says %d points read, traces hold %d", rep.Read, n)
		}
		if len(traces) == 0 || (f == PLT && len(traces) != 1) {
			continue
		}
		// Round trip through the same format.
		var b bytes.Buffer
		w, _ := newWriter(&b, f, attrKeys(traces...))
		for _, tr := range traces {
			if err := w.Write(tr); err != nil {
				t.Logf("write: %v", err) // e.g. a CSV attribute named like a column
				return
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r2, _ := NewReader(&b, f, ReadOptions{Name: "again"})
		again, err := ReadAll(r2)
		if err != nil {
			t.Fatalf("reading our own %s output: %v\n%s", f, err, b.String())
		}
		m := 0
		for _, tr := range again {
			m += tr.Len()
		}
		if m != n {
			t.Fatalf("round trip kept %d of %d points\n%s", m, n, b.String())
		}
	}
}

func FuzzReadPLT(f *testing.F) {
	f.Add([]byte(pltHead + pltRows))
	f.Add([]byte(pltHead + "39.9,116.3,0,-777,39744.5,,\n"))
	f.Add([]byte(pltHead + "39.9x,116.3,0,1,39744.1,2008-10-23,02:53:04\n"))
	f.Add([]byte(pltHead + pltRows + "39.98"))
	f.Add([]byte("Geolife trajectory\nWGS 84\n"))
	f.Add([]byte(""))
	f.Add([]byte(pltHead))
	f.Add([]byte(strings.Replace(pltHead, "WGS 84", "Pulkovo 1942", 1) + pltRows))
	f.Add([]byte("OziExplorer Track Point File Version 2.1\r\nWGS 84\r\nAltitude is in Feet\r\nReserved 3\r\n0,2,255,x,0,0,2,8421376\r\n1\r\n39.9,116.3,0,1,39744.5,,\r\n"))
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x00\n\x01\x02"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, PLT, data) })
}

func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("uid,time,lat,lon,alt,mode\na,1224730384,39.9,116.3,5,walk\na,2008-10-23T02:53:05.5Z,39.91,116.31,,\nb,1224730386,1,2,,bus\n"))
	f.Add([]byte("time,lat,lon\n2008-10-23 02:53:04,1,2\n"))
	f.Add([]byte("uid,time,lat,lon\na,1,2\n"))
	f.Add([]byte("uid,time,lat,lon\na,\"1,2,3\n"))
	f.Add([]byte("\ufeffuid,t,latitude,lng\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, CSV, data) })
}

func FuzzReadGPX(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>a</name><trkseg><trkpt lat="1" lon="2"><ele>3</ele><time>2008-10-23T02:53:04Z</time><extensions><hr>90</hr></extensions></trkpt></trkseg></trk></gpx>`))
	f.Add([]byte(`<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>2008-10-23T02:53:04Z</time></trkpt>`))
	f.Add([]byte(`<gpx><trk><trkseg><trkpt lat="x" lon="2"></trkpt></trkseg></trk></gpx>`))
	f.Add([]byte(`<gpx><wpt lat="1" lon="2"/><trk><extensions><uid>u</uid></extensions><trkseg/></trk></gpx>`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, GPX, data) })
}

func FuzzReadGeoJSON(f *testing.F) {
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[116.3,39.9,1],[116.4,39.8,2]]},"properties":{"uid":"a","times":["2008-10-23T02:53:04Z",1224730385],"attrs":[{"k":"v"},null]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[116.3,39.9]},"properties":{"uid":"a","time":"2008-10-23T02:53:04Z","x":[1]}}]}`))
	f.Add([]byte(`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[116.3,39.9]]},"properties":{"times":["x"]}}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature"`))
	f.Add([]byte(`[[[[[[`))
	f.Add([]byte(`{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[[[116.3,39.9],[116.4,39.8,2]],[],[[1,2]]]},"properties":{"uid":"a","times":[[1,2],[],[3]],"alts":[1,null,3],"attrs":[[{"k":"v"},null],[],[null]]}}`))
	f.Add([]byte(`{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[[[116.3,39.9]],[[1,2]]]},"properties":{"coordinateProperties":{"times":[1,2]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, GeoJSON, data) })
}

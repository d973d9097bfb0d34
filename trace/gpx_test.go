package trace

import (
	"bytes"
	"encoding/xml"
	"math"
	"testing"
	"time"
)

func TestReadGPX(t *testing.T) {
	in := `<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="x" xmlns="http://www.topografix.com/GPX/1/1"
     xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
  <metadata><name>not a track</name></metadata>
  <wpt lat="1" lon="2"><name>home</name></wpt>
  <trk>
    <name>morning &amp; run</name>
    <trkseg>
      <trkpt lat="39.9" lon="116.3"><ele>44.5</ele><time>2008-10-23T02:53:04Z</time>
        <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>120</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>
      </trkpt>
      <trkpt lat="39.91" lon="116.31"><time>2008-10-23T02:53:05.25Z</time></trkpt>
    </trkseg>
    <trkseg>
      <trkpt lat="39.92" lon="116.32"><time>2008-10-23T02:54:00Z</time></trkpt>
    </trkseg>
  </trk>
  <trk>
    <extensions><tp:uid xmlns:tp="https://github.com/tracepriv/tracepriv/gpx/1">u7</tp:uid></extensions>
    <trkseg><trkpt lat="-1" lon="-2"><time>2008-10-23T02:55:00Z</time></trkpt></trkseg>
  </trk>
</gpx>`
	traces, rep, err := read(t, GPX, in, ReadOptions{UID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 3 || rep.Read != 4 {
		t.Fatalf("%d traces, report %+v", len(traces), rep)
	}
	// Track names are free text: not read.
	for i, want := range []struct{ uid, name string }{{"default", ""}, {"default", ""}, {"u7", ""}} {
		if traces[i].UID != want.uid || traces[i].Name != want.name {
			t.Errorf("trace %d: uid %q name %q, want %q %q", i, traces[i].UID, traces[i].Name, want.uid, want.name)
		}
	}
	p := traces[0].Points
	if p[0].Alt != 44.5 || !math.IsNaN(p[1].Alt) || p[0].Attrs["hr"] != "120" {
		t.Errorf("points %+v", p)
	}
	if !p[1].Time.Equal(time.Date(2008, 10, 23, 2, 53, 5, 25e7, time.UTC)) {
		t.Errorf("time %v", p[1].Time)
	}
}

func TestWriteGPXValid(t *testing.T) {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.FixedZone("", 3600))
	tr := &Trace{UID: "a<b", Name: "x&y", Points: []Point{
		{Time: t0, Lat: 1, Lon: 2, Alt: 3, Attrs: map[string]string{"k\"": "<v>"}},
		{Time: t0.Add(time.Second), Lat: 4, Lon: 5, Alt: math.NaN()},
	}}
	var b bytes.Buffer
	w, _ := NewWriter(&b, GPX)
	if err := w.Write(tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"http://www.topografix.com/GPX/1/1 gpx"`
		Version string   `xml:"version,attr"`
		Trk     []struct {
			Name   string `xml:"name"`
			Trkseg []struct {
				Trkpt []struct {
					Lat  float64  `xml:"lat,attr"`
					Ele  *float64 `xml:"ele"`
					Time string   `xml:"time"`
				} `xml:"trkpt"`
			} `xml:"trkseg"`
		} `xml:"trk"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML in the GPX 1.1 namespace: %v\n%s", err, b.String())
	}
	// The trace's name is not written (Trace.Name).
	if doc.Version != "1.1" || len(doc.Trk) != 1 || doc.Trk[0].Name != "" {
		t.Fatalf("document %+v", doc)
	}
	pts := doc.Trk[0].Trkseg[0].Trkpt
	// GPX times are UTC.
	if len(pts) != 2 || pts[0].Time != "2008-10-23T01:53:04Z" || *pts[0].Ele != 3 || pts[1].Ele != nil {
		t.Errorf("points %+v", pts)
	}
	got, _, err := read(t, GPX, b.String(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].UID != "a<b" || got[0].Points[0].Attrs["k\""] != "<v>" {
		t.Errorf("read back uid %q attrs %v", got[0].UID, got[0].Points[0].Attrs)
	}
}

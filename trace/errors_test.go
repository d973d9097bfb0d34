package trace

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseErrorMessage(t *testing.T) {
	// Lines 7-11 are good points (without the optional day number); line 12 is bad.
	in := pltHead
	for i := 0; i < 5; i++ {
		in += fmt.Sprintf("39.930702,116.376417,0,492,,2008-10-23,02:53:0%d\n", i)
	}
	in += "39.9x,116.376417,0,492,,2008-10-23,02:53:10\n"
	_, _, err := read(t, PLT, in, ReadOptions{Name: "data/x.plt", Strict: true})
	want := `data/x.plt:12: field "lat": "39.9x" is not a number`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrNotNumber) {
		t.Fatalf("error %T does not unwrap to *ParseError/ErrNotNumber", err)
	}
}

// TestParseErrors checks that truncated and garbled inputs give a
// ParseError with the right line and field, in every format.
func TestParseErrors(t *testing.T) {
	const gpxHead = `<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
<trk><name>a</name>
<trkseg>
`
	const gpxPt = `<trkpt lat="39.9307" lon="116.3764"><ele>10</ele><time>2008-10-23T02:53:04Z</time></trkpt>
`
	const gjHead = `{"type": "FeatureCollection",
 "features": [
  {"type": "Feature",
   "geometry": {"type": "LineString",
     "coordinates": [[116.3764, 39.9307],
                     [116.3765, 39.9308],
                     [116.3766, 39.9309]]},
`
	validGPX := gpxHead + gpxPt + "</trkseg></trk>\n</gpx>\n"
	for _, tc := range []struct {
		name  string
		f     Format
		in    string
		line  int
		field string
		err   error
	}{
		{"plt empty", PLT, "", 0, "", ErrNotPLT},
		{"plt short header", PLT, "Geolife trajectory\nWGS 84\nAltitude is in Feet\n", 3, "", ErrTruncated},
		{"plt bad lat", PLT, pltHead + pltRows + "39.9x,116.3,0,492,39744.12,2008-10-23,02:53:20\n", 10, "lat", ErrNotNumber},
		{"plt lat range", PLT, pltHead + "95,116.3,0,492,39744.12,2008-10-23,02:53:20\n", 7, "lat", ErrOutOfRange},
		{"plt lon range", PLT, pltHead + "39,196.3,0,492,39744.12,2008-10-23,02:53:20\n", 7, "lon", ErrOutOfRange},
		{"plt truncated row", PLT, pltHead + pltRows + "39.93070", 10, "lon", ErrMissing},
		{"plt few fields", PLT, pltHead + "39.9,116.3,0\n", 7, "alt_feet", ErrMissing},
		{"plt many fields", PLT, pltHead + "39.9,116.3,0,1,39744.12,2008-10-23,02:53:20,x\n", 7, "", ErrMalformed},
		{"plt bad alt", PLT, pltHead + "39.9,116.3,0,1O,39744.1201851852,2008-10-23,02:53:04\n", 7, "alt_feet", ErrNotNumber},
		{"plt bad date", PLT, pltHead + "39.9,116.3,0,1,39744.1201851852,2008-13-23,02:53:04\n", 7, "date", ErrBadTime},
		{"plt bad time", PLT, pltHead + "39.9,116.3,0,1,39744.1201851852,2008-10-23,25:53:04\n", 7, "time", ErrBadTime},
		{"plt bad days", PLT, pltHead + "39.9,116.3,0,1,x,2008-10-23,02:53:04\n", 7, "days", ErrNotNumber},
		{"plt days disagree", PLT, pltHead + "39.9,116.3,0,1,39745.1201851852,2008-10-23,02:53:04\n", 7, "days", ErrInconsistent},
		{"plt no time at all", PLT, pltHead + "39.9,116.3,0,1,,,\n", 7, "date", ErrMissing},
		{"plt time conflict", PLT, pltHead + pltRows + "39.9,116.3,0,1,39744.1203125,2008-10-23,02:53:15\n", 10, "time", ErrTimeConflict},

		{"csv empty", CSV, "", 1, "", ErrTruncated},
		{"csv header lacks lat", CSV, "uid,time,lon\n", 1, "lat", ErrMissing},
		{"csv duplicate column", CSV, "uid,time,lat,lon,Lat\n", 1, "Lat", ErrMalformed},
		{"csv short row", CSV, "uid,time,lat,lon\na,1224730384,39.9,116.3\na,1224730385,39.9\n", 3, "lon", ErrMissing},
		{"csv long row", CSV, "uid,time,lat,lon\na,1224730384,39.9,116.3,7\n", 2, "", ErrMalformed},
		{"csv bad time", CSV, "uid,time,lat,lon\na,2008-10-23T02:53:04Z,39.9,116.3\na,yesterday,39.9,116.3\n", 3, "time", ErrBadTime},
		{"csv bad lon", CSV, "uid,time,lat,lon\na,1224730384,39.9,-181\n", 2, "lon", ErrOutOfRange},
		{"csv bad alt", CSV, "uid,time,lat,lon,alt\na,1224730384,39.9,116.3,high\n", 2, "alt", ErrNotNumber},
		{"csv missing lat", CSV, "uid,time,lat,lon\na,1224730384,,116.3\n", 2, "lat", ErrMissing},
		{"csv bare quote", CSV, "uid,time,lat,lon\na,1224730384,39.9,116.3\na,12\"4,39.9,116.3\n", 3, "", ErrMalformed},
		{"csv unterminated quote", CSV, "uid,time,lat,lon\na,1224730384,39.9,116.3\n\"a,1224730385,39.9,116.3\n", 3, "", ErrMalformed},

		{"gpx empty", GPX, "", 1, "", ErrTruncated},
		{"gpx truncated", GPX, validGPX[:len(gpxHead)+40], 5, "", ErrTruncated},
		{"gpx truncated after segment", GPX, gpxHead + gpxPt + "</trkseg>\n</trk>\n", 8, "", ErrTruncated},
		{"gpx wrong root", GPX, "<kml></kml>", 1, "", ErrMalformed},
		{"gpx second root", GPX, validGPX + "<gpx>\n</gpx>", 8, "", ErrMalformed},
		{"gpx mismatched tags", GPX, gpxHead + gpxPt + "</trk>\n", 6, "", ErrMalformed},
		{"gpx bad lat", GPX, gpxHead + gpxPt + `<trkpt lat="39.9x" lon="116.3"><time>2008-10-23T02:53:05Z</time></trkpt>` + "\n</trkseg></trk></gpx>", 6, "lat", ErrNotNumber},
		{"gpx missing lon", GPX, gpxHead + `<trkpt lat="39.9"><time>2008-10-23T02:53:05Z</time></trkpt>` + "\n</trkseg></trk></gpx>", 5, "lon", ErrMissing},
		{"gpx missing time", GPX, gpxHead + gpxPt + `<trkpt lat="39.9" lon="116.3"><ele>1</ele></trkpt>` + "\n</trkseg></trk></gpx>", 6, "time", ErrMissing},
		{"gpx bad time", GPX, gpxHead + gpxPt + "<trkpt lat=\"39.9\" lon=\"116.3\">\n<time>noon</time>\n</trkpt>\n</trkseg></trk></gpx>", 7, "time", ErrBadTime},
		{"gpx bad ele", GPX, gpxHead + "<trkpt lat=\"39.9\" lon=\"116.3\">\n<ele>1,5</ele><time>2008-10-23T02:53:05Z</time></trkpt>\n</trkseg></trk></gpx>", 6, "ele", ErrNotNumber},

		{"geojson empty", GeoJSON, "", 1, "", ErrTruncated},
		{"geojson truncated", GeoJSON, gjHead, 8, "", ErrTruncated},
		{"geojson syntax", GeoJSON, "{\"type\": \"Feature\",\n \"geometry\": {\"type\" \"Point\"}}", 2, "", ErrMalformed},
		{"geojson not object", GeoJSON, "[1, 2]", 1, "", ErrMalformed},
		{"geojson bad type", GeoJSON, "{\n\"type\": \"Polygon\", \"coordinates\": []}", 2, "type", ErrUnsupported},
		{"geojson times count", GeoJSON, gjHead + "   \"properties\": {\"times\": [\n\"2008-10-23T02:53:04Z\"]}}]}", 8, "features[0].properties.times", ErrMalformed},
		{"geojson no times", GeoJSON, gjHead + "   \"properties\": {\"uid\": \"a\"}}]}", 0, "features[0].properties.times", ErrMissing},
		{"geojson bad time", GeoJSON, gjHead + "   \"properties\": {\"times\": [\n\"2008-10-23T02:53:04Z\",\n\"2008-10-23T02:53:05Z\",\n\"2008-10-23T25:53:06Z\"]}}]}", 11, "features[0].properties.times[2]", ErrBadTime},
		{"geojson bad lat", GeoJSON, strings.Replace(gjHead, "39.9308", "99.9848", 1) + "   \"properties\": {\"times\": [1, 2, 3]}}]}", 6, "features[0].geometry.coordinates[1][1]", ErrOutOfRange},
		{"geojson string lon", GeoJSON, strings.Replace(gjHead, "116.3766", "\"116.3766\"", 1) + "   \"properties\": {\"times\": [1, 2, 3]}}]}", 7, "features[0].geometry.coordinates[2][0]", ErrNotNumber},
		{"geojson point no time", GeoJSON, "{\"type\": \"FeatureCollection\", \"features\": [\n{\"type\": \"Feature\", \"geometry\": {\"type\": \"Point\", \"coordinates\": [116.3, 39.9]},\n \"properties\": {\"uid\": \"a\"}}]}", 0, "features[0].properties.time", ErrMissing},
		{"geojson polygon", GeoJSON, "{\"type\": \"FeatureCollection\", \"features\": [\n{\"type\": \"Feature\", \"properties\": {},\n \"geometry\": {\"type\": \"Polygon\", \"coordinates\": []}}]}", 3, "features[0].geometry.type", ErrUnsupported},
		{"geojson null geometry", GeoJSON, "{\"type\": \"Feature\", \"geometry\": null, \"properties\": {}}", 1, "geometry", ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(t, tc.f, tc.in, ReadOptions{Name: "in." + string(tc.f), Strict: true})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v (%T), want a *ParseError", err, err)
			}
			if pe.Line != tc.line || pe.Field != tc.field || !errors.Is(err, tc.err) {
				t.Errorf("got line %d field %q error %q; want line %d field %q wrapping %q", pe.Line, pe.Field, err, tc.line, tc.field, tc.err)
			}
			if pe.File != "in."+string(tc.f) || !strings.HasPrefix(err.Error(), "in."+string(tc.f)) {
				t.Errorf("message %q does not start with the file name", err)
			}
		})
	}
}

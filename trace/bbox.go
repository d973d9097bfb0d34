package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/param"
)

// ParseBBox parses a box written "MINLAT,MINLON,MAXLAT,MAXLON" in decimal
// degrees (the --bbox flag's form; spaces around the numbers are allowed)
// and validates it (BBox.Validate). A bad box is a *param.Error named
// "bbox".
func ParseBBox(s string) (BBox, error) {
	f := strings.Split(s, ",")
	if len(f) != 4 {
		return BBox{}, param.Invalid("bbox", s, fmt.Sprintf("want MINLAT,MINLON,MAXLAT,MAXLON (four numbers), got %d fields", len(f)))
	}
	names := [4]string{"MINLAT", "MINLON", "MAXLAT", "MAXLON"}
	var v [4]float64
	for i, x := range f {
		var err error
		if v[i], err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
			return BBox{}, param.Invalid("bbox", s, fmt.Sprintf("%s %q is not a number", names[i], strings.TrimSpace(x)))
		}
	}
	b := BBox{MinLat: v[0], MinLon: v[1], MaxLat: v[2], MaxLon: v[3]}
	return b, b.Validate()
}

// Validate reports whether b is a usable box: finite corners in the WGS84
// ranges, MinLat < MaxLat and MinLon < MaxLon (a box may not cross the
// antimeridian). A bad box is a *param.Error named "bbox" whose value is
// the box as ParseBBox reads it.
func (b BBox) Validate() error {
	for _, p := range []geo.Point{{Lat: b.MinLat, Lon: b.MinLon}, {Lat: b.MaxLat, Lon: b.MaxLon}} {
		if err := p.Validate(); err != nil {
			return &param.Error{Name: "bbox", Value: b.text(), Why: fmt.Sprintf("corner %v,%v: %v", p.Lat, p.Lon, err), Err: err}
		}
	}
	if !(b.MinLat < b.MaxLat) {
		return param.Invalid("bbox", b.text(), fmt.Sprintf("MINLAT %v must be below MAXLAT %v", b.MinLat, b.MaxLat))
	}
	if !(b.MinLon < b.MaxLon) {
		return param.Invalid("bbox", b.text(), fmt.Sprintf("MINLON %v must be below MAXLON %v (boxes across the antimeridian are not supported)", b.MinLon, b.MaxLon))
	}
	return nil
}

// text writes b as ParseBBox reads it.
func (b BBox) text() string {
	return fmt.Sprintf("%v,%v,%v,%v", b.MinLat, b.MinLon, b.MaxLat, b.MaxLon)
}

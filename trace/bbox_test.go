package trace_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

func TestParseBBox(t *testing.T) {
	t.Parallel()
	want := trace.BBox{MinLat: 39.75, MinLon: 116.15, MaxLat: 40.10, MaxLon: 116.60}
	if b, err := trace.ParseBBox(" 39.75, 116.15,40.10 ,116.60"); err != nil || b != want {
		t.Fatalf("ParseBBox = %+v, %v; want %+v", b, err, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"1,2,3", "four numbers"},
		{"1,2,x,4", `MAXLAT "x" is not a number`},
		{"40,116,39,117", "MINLAT 40 must be below MAXLAT 39"},
		{"39,117,40,116", "antimeridian"},
		{"-95,0,0,1", "latitude -95"},
		{"NaN,0,1,1", "not finite"},
		{"0,200,1,201", "longitude 200"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			_, err := trace.ParseBBox(tc.in)
			var pe *param.Error
			if !errors.As(err, &pe) || pe.Name != "bbox" || !errors.Is(err, param.ErrInvalid) {
				t.Fatalf("ParseBBox(%q) = %v, want a *param.Error named bbox", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseBBox(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
}

package attack_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// TestStayOptionsAreParameters: a stay rule no trace can meet is a
// *param.Error (a bad flag under --json; once internal, and +Inf was
// called "not positive"); the default rule is the control.
func TestStayOptionsAreParameters(t *testing.T) {
	pts := []trace.Point{{Lat: 39.9, Lon: 116.4, Time: time.Unix(0, 0)}, {Lat: 39.9, Lon: 116.4, Time: time.Unix(60, 0)}}
	for _, o := range []attack.StayOptions{{RadiusM: math.Inf(1)}, {RadiusM: 1e308}, {RadiusM: -1}, {MinDuration: -time.Second}} {
		if _, err := attack.Stays(pts, o); !errors.Is(err, param.ErrInvalid) {
			t.Errorf("%+v: %v; want a *param.Error", o, err)
		}
	}
	if _, err := attack.Stays(pts, attack.StayOptions{}); err != nil {
		t.Errorf("the default rule: %v", err)
	}
}

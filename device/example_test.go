package device_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// A geoind session on the device, as an app calls it through gomobile: the
// configuration in, one JSON answer per query out. The configuration is
// geoind.ExampleSession's (ε = ln 10 per 100 m, α = 3 km), and so are the
// costs: the noise 5.6 % of ε, each test 2.6 %. Seeded for a reproducible
// example only, which every answer says; an app calls NewSession.
func ExampleSession() {
	s, err := device.NewSeededSession(`{"mechanism": "pm", "manager": "fixed-utility",
		"params": {"epsilon": 0.023025850929940458, "pr0": 0.5}, "accuracy": 3000,
		"origin": {"lat": 39.9, "lon": 116.4}, "noise": {"grid": 1}}`, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2008, 10, 24, 2, 10, 0, 0, time.UTC)
	for i := range 3 {
		answer, err := s.Query(39.9841+0.0001*float64(i), 116.3185, t0.Add(time.Duration(i)*time.Minute).UnixMilli())
		if err != nil {
			fmt.Println(err)
			return
		}
		var a struct {
			Report struct {
				Step          int
				Mode          string
				Hard          bool
				Spent, Budget float64
			}
			State      struct{ Spent float64 }
			Randomness string
			Private    bool
		}
		if err := json.Unmarshal([]byte(answer), &a); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d: mode %s, hard %v, spent %.1f%% of ε (state: %.1f%%); %s, private %v\n", a.Report.Step, a.Report.Mode,
			a.Report.Hard, 100*a.Report.Spent/a.Report.Budget, 100*a.State.Spent/a.Report.Budget, a.Randomness, a.Private)
	}
	// Output:
	// step 0: mode noise, hard true, spent 5.6% of ε (state: 5.6%); seeded:1, private false
	// step 1: mode test, hard false, spent 8.3% of ε (state: 8.3%); seeded:1, private false
	// step 2: mode test, hard false, spent 10.9% of ε (state: 10.9%); seeded:1, private false
}

// A recorded trace released on the device with CIP against the bundled
// prior family: the released trace and its certificate come back together,
// with the certificate's digest that the device charges the release by.
func ExampleRelease() {
	traces, err := sample.Traces()
	if err != nil {
		fmt.Println(err)
		return
	}
	var plt bytes.Buffer
	if err := trace.Write(&plt, traces[:1], trace.PLT); err != nil {
		fmt.Println(err)
		return
	}
	// device.Release draws from crypto/rand; the seed is for a reproducible example.
	out, err := device.ReleaseSeeded(plt.Bytes(), "plt", `{"epsilon": 1, "lambda": 2, "radius_m": 100}`, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	var r struct {
		Format            string
		CertificateSHA256 string  `json:"certificate_sha256"`
		EpsilonMax        float64 `json:"epsilon_max"`
		Points            int
		Private           bool
	}
	if err := json.Unmarshal(out, &r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d points released as %s; epsilon %.3g per person; private %v; digest of %d hex digits\n",
		r.Points, r.Format, r.EpsilonMax, r.Private, len(r.CertificateSHA256))
	// Output:
	// 268 points released as plt; epsilon 1 per person; private false; digest of 64 hex digits
}

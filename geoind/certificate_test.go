package geoind

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// TestCertificateRoundTrip releases two people, writes the release with
// its certificate, and reads the certificate back: the same configuration
// and spending, and a statement of the guarantee. Bad certificates are
// refused.
func TestCertificateRoundTrip(t *testing.T) {
	cfg := Config{Mechanism: "pm", Manager: "fixed-rate", Params: Params{Epsilon: 0.023}, Rate: 0.02 * 0.023,
		Origin: geo.Point{Lat: 39.9042, Lon: 116.4074}, Noise: PlanarLaplace{Grid: 1}}
	var traces []*trace.Trace
	t0 := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	for k, uid := range []string{"a", "b"} {
		tr := &trace.Trace{UID: uid}
		for i := range 30 {
			tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * time.Minute), Lat: 39.98 + 0.001*float64(i), Lon: 116.30 + 0.01*float64(k)})
		}
		traces = append(traces, tr)
	}
	src := noise.Seeded(4)
	outs, people, err := SanitizeByPerson(cfg, traces, nil, src)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCertificate(cfg, people, src)
	dir := t.TempDir()
	f := Files{Traces: filepath.Join(dir, "out.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "out.csv.cert.json")}
	if err := f.Write(outs, c); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCertificateFile(f.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	if back.Randomness != "seeded:4" || back.EpsilonPerMetre != 0.023 || back.Config != cfg || len(back.People) != 2 {
		t.Fatalf("read back %+v", back)
	}
	for i, p := range back.People {
		if p.Spent != people[i].Spent || p.Released != people[i].Released || !(p.Spent <= p.Budget) {
			t.Errorf("person %d: %+v, released %+v", i, p, people[i])
		}
	}
	if !strings.Contains(back.Privacy, "per person") || !strings.Contains(back.Privacy, "0.023") {
		t.Errorf("privacy statement %q", back.Privacy)
	}
	if got, _, err := trace.ReadFile(f.Traces, trace.ReadOptions{}); err != nil || len(got) != 2 {
		t.Errorf("released traces read back: %d, %v", len(got), err)
	}

	raw, _ := os.ReadFile(f.Certificate)
	for name, bad := range map[string]string{
		"version": strings.Replace(string(raw), `"version": 1`, `"version": 2`, 1),
		"field":   strings.Replace(string(raw), `"version": 1,`, `"version": 1, "extra": 0,`, 1),
		"epsilon": strings.Replace(string(raw), `"epsilon_per_metre": 0.023`, `"epsilon_per_metre": 0.01`, 1),
		"grid":    strings.Replace(string(raw), `"grid": 1`, `"grid": 0`, 1),
	} {
		if bad == string(raw) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := ReadCertificate(bytes.NewReader([]byte(bad))); err == nil {
			t.Errorf("%s: an altered certificate was accepted", name)
		}
	}
	if err := (Files{Traces: f.Traces}).Write(outs, c); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("a release without a certificate path: %v", err)
	}
}

package device_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/device"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

const testConfig = `{"mechanism":"pm","manager":"fixed-rate","rate":0.002,"params":{"epsilon":0.023025850929940458},
	"origin":{"lat":39.9042,"lon":116.4074},"noise":{"grid":1}}`

// TestSessionIsTheLibrary checks that the wrapper adds nothing: a seeded
// device session answers, step for step, what geoind.Session answers with
// the same seed, and its state is the library's.
func TestSessionIsTheLibrary(t *testing.T) {
	var cfg geoind.Config
	if err := json.Unmarshal([]byte(testConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	lib, err := geoind.NewSession(cfg, noise.Seeded(42))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := device.NewSeededSession(testConfig, 42)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	for i := range 40 {
		p := geo.Point{Lat: 39.98 + 0.0003*float64(i), Lon: 116.31 + 0.0002*float64(i%7)}
		at := t0.Add(time.Duration(i) * 30 * time.Second)
		want, werr := lib.Query(p, at)
		got, gerr := dev.Query(p.Lat, p.Lon, at.UnixMilli())
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("step %d: library error %v, device error %v", i, werr, gerr)
		}
		if werr != nil {
			if !geoind.IsExhausted(werr) || !device.Exhausted(gerr) {
				t.Fatalf("step %d: %v / %v", i, werr, gerr)
			}
			break
		}
		var a struct {
			Report     geoind.Report
			State      geoind.State
			Randomness string
			Private    bool
		}
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(a.Report)
		if !bytes.Equal(wb, gb) {
			t.Fatalf("step %d: device report %s, library %s", i, gb, wb)
		}
		ws, _ := json.Marshal(lib.State())
		gs, _ := json.Marshal(a.State)
		if !bytes.Equal(ws, gs) {
			t.Fatalf("step %d: device state differs from the library's", i)
		}
		if a.Randomness != "seeded:42" || a.Private {
			t.Fatalf("step %d: a seeded answer says randomness %q, private %v", i, a.Randomness, a.Private)
		}
	}
	// Resume continues from the stored state with fresh crypto noise.
	st, err := dev.State()
	if err != nil {
		t.Fatal(err)
	}
	r, err := device.ResumeSession(st)
	if err != nil {
		t.Fatal(err)
	}
	if st2, _ := r.State(); st2 != st {
		t.Errorf("resumed state differs from the stored one")
	}
	// An edited state is refused (geoind.Resume's accounting check).
	var edited geoind.State
	if err := json.Unmarshal([]byte(st), &edited); err != nil {
		t.Fatal(err)
	}
	edited.Spent /= 2
	eb, _ := json.Marshal(edited)
	if _, err := device.ResumeSession(string(eb)); err == nil || !strings.Contains(err.Error(), "spent") {
		t.Errorf("a state with an edited spending: %v, want a refusal naming the spending", err)
	}
}

// TestCryptoSaysSo checks that the unseeded entry points draw from
// crypto/rand and say so, and that bad input names what to fix.
func TestCryptoSaysSo(t *testing.T) {
	s, err := device.NewSession(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Query(39.99, 116.32, 1e12)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a, `"randomness":"crypto","private":true`) {
		t.Errorf("a crypto answer: %s", a)
	}
	for _, tc := range []struct{ cfg, want string }{
		{strings.Replace(testConfig, `"rate"`, `"rat"`, 1), `unknown field "rat"`},
		{strings.Replace(testConfig, `"grid":1`, `"grid":0`, 1), "grid"},
	} {
		if _, err := device.NewSession(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %s: error %v, want one naming %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := device.NewSeededSession(testConfig, -1); err == nil {
		t.Errorf("a negative seed was accepted")
	}
}

// TestReleaseIsTheLibrary checks that a seeded device release is
// sanitize.Release's with the same seed, trace and certificate, and that
// the digest is of the certificate's bytes.
func TestReleaseIsTheLibrary(t *testing.T) {
	traces, err := sample.Traces()
	if err != nil {
		t.Fatal(err)
	}
	var plt bytes.Buffer
	if err := trace.Write(&plt, traces[:1], trace.PLT); err != nil {
		t.Fatal(err)
	}
	out, err := device.ReleaseSeeded(plt.Bytes(), "plt", `{"epsilon":1,"lambda":2,"radius_m":100,"uid":"p"}`, 9)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Trace, Certificate string
		Digest             string `json:"certificate_sha256"`
		Private            bool
		Randomness         string
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}

	// The library, called directly on the same file.
	rd, err := trace.NewReader(bytes.NewReader(plt.Bytes()), trace.PLT, trace.ReadOptions{UID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := trace.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := sample.Prior()
	if err != nil {
		t.Fatal(err)
	}
	outs, cert, err := sanitize.Release(in, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100,
		Source: noise.Seeded(9), Ledger: budget.Seeded})
	if err != nil {
		t.Fatal(err)
	}
	cert.RecordInput(rd.Report())
	var tb bytes.Buffer
	if err := trace.Write(&tb, outs, trace.PLT); err != nil {
		t.Fatal(err)
	}
	if tb.String() != r.Trace {
		t.Errorf("the device's released trace differs from sanitize.Release's")
	}
	if sum := sha256.Sum256([]byte(r.Certificate)); hex.EncodeToString(sum[:]) != r.Digest {
		t.Errorf("certificate_sha256 %s is not the digest of the certificate's bytes", r.Digest)
	}
	if got, want := withoutSeconds(t, r.Certificate), withoutSeconds(t, certText(t, cert)); got != want {
		t.Errorf("the device's certificate differs from sanitize.Release's (beyond its seconds)")
	}
	if r.Private || r.Randomness != "seeded:9" || !strings.Contains(r.Certificate, `"private": false`) {
		t.Errorf("a seeded release says private %v, randomness %q", r.Private, r.Randomness)
	}
	if _, err := device.Release(plt.Bytes(), "plt", `{"epsilon":1,"lambda":2,"radius":100}`); err == nil || !strings.Contains(err.Error(), `unknown field "radius"`) {
		t.Errorf("a misspelt option: %v", err)
	}
}

func certText(t *testing.T, c *sanitize.Certificate) string {
	t.Helper()
	var b bytes.Buffer
	if err := sanitize.WriteCertificate(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// withoutSeconds is a certificate with its "seconds" (the time the
// release took, the one field that is not a function of the inputs) zeroed.
func withoutSeconds(t *testing.T, doc string) string {
	t.Helper()
	c, err := sanitize.ReadCertificate(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c.Seconds = 0
	return certText(t, c)
}

package sanitize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/matfile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// TestFilesWrite checks that a release, its certificate and its noise
// covariance land together and read back; that a covariance that cannot
// be written stops everything; and that a streamed release writes too.
func TestFilesWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := []*trace.Trace{walk(40, 39.95, 116.35)}
	outs, cert, err := Release(in, options(familyPrior()))
	if err != nil {
		t.Fatal(err)
	}
	f := Files{Traces: filepath.Join(dir, "out.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "out.cert.json"), NoiseCovariance: filepath.Join(dir, "noise.csv")}
	if err := f.Write(in, outs, cert); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCertificateFile(f.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	if back.Persons[0].Points != 40 || back.Randomness != cert.Randomness {
		t.Errorf("certificate read back: %+v", back.Persons[0])
	}
	got, _, err := trace.ReadFile(f.Traces, trace.ReadOptions{})
	if err != nil || len(got) != 1 || got[0].Len() != 40 {
		t.Fatalf("released traces read back: %v, %v", got, err)
	}
	mf, err := matfile.ReadFile(f.NoiseCovariance)
	if err != nil {
		t.Fatal(err)
	}
	m := mf.Dense()
	want, _ := cert.InputNoiseCovariance(in)
	if r, c := m.Dims(); r != 40 || c != 40 || m.At(3, 7) == 0 {
		t.Fatalf("noise covariance %dx%d", r, c)
	} else if d := m.At(3, 7) - want.At(3, 7); d*d > 1e-12*want.At(3, 3)*want.At(3, 3) {
		t.Errorf("noise covariance entry %v, certificate's %v", m.At(3, 7), want.At(3, 7))
	}

	// Two people: no covariance, and nothing else written either.
	two := []*trace.Trace{walk(20, 39.95, 116.35), walk(20, 39.96, 116.36)}
	two[1].UID = "v"
	outs2, cert2, err := Release(two, options(familyPrior()))
	if err != nil {
		t.Fatal(err)
	}
	g := Files{Traces: filepath.Join(dir, "two.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "two.cert.json"), NoiseCovariance: filepath.Join(dir, "two-noise.csv")}
	var pe *param.Error
	if err := g.Write(two, outs2, cert2); !errors.As(err, &pe) || pe.Name != "NoiseCovariance" {
		t.Errorf("covariance of two people: %v", err)
	}
	for _, p := range []string{g.Traces, g.Certificate, g.NoiseCovariance} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written although the release failed", p)
		}
	}

	// A streamed release.
	var csv bytes.Buffer
	if err := trace.Write(&csv, in, trace.CSV); err != nil {
		t.Fatal(err)
	}
	open := func() (trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(csv.Bytes()), trace.CSV, trace.ReadOptions{})
	}
	s, scert, err := NewStream(open, options(familyPrior()))
	if err != nil {
		t.Fatal(err)
	}
	h := Files{Traces: filepath.Join(dir, "stream.csv"), Format: trace.CSV, Certificate: filepath.Join(dir, "stream.cert.json")}
	if err := (Files{Traces: h.Traces, Certificate: h.Certificate, NoiseCovariance: "x"}).WriteStream(s, scert); err == nil {
		t.Error("a stream wrote a noise covariance")
	}
	if err := h.WriteStream(s, scert); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(h.Traces); err != nil || len(b) == 0 {
		t.Errorf("streamed release: %v", err)
	}
	if _, err := ReadCertificateFile(h.Certificate); err != nil {
		t.Error(err)
	}
}

// TestFilesWriteInfersFormat: with no Format, Files writes the format its Traces' name
// implies, as trace.WriteFile does (it said `unknown trace format ""`); a name that implies
// none is refused, naming the file, and nothing is written.
func TestFilesWriteInfersFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := []*trace.Trace{walk(30, 39.95, 116.35)}
	outs, cert, err := Release(in, options(familyPrior()))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"out.csv", "out.gpx", "out.geojson", "out.plt"} {
		f := Files{Traces: filepath.Join(dir, name), Certificate: filepath.Join(dir, name+CertificateSuffix)}
		if err := f.Write(in, outs, cert); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The same bytes as trace.WriteFile's inference gives.
		ref := filepath.Join(dir, "ref-"+name)
		if err := trace.WriteFile(ref, outs, ""); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(f.Traces)
		want, _ := os.ReadFile(ref)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Files wrote other bytes than trace.WriteFile", name)
		}
		back, _, err := trace.ReadFile(f.Traces, trace.ReadOptions{})
		if err != nil || len(back) != 1 || back[0].Len() != 30 {
			t.Errorf("%s read back: %v", name, err)
		}
	}
	bad := Files{Traces: filepath.Join(dir, "out.txt"), Certificate: filepath.Join(dir, "out.txt.cert.json")}
	err = bad.Write(in, outs, cert)
	if err == nil || !strings.Contains(err.Error(), "out.txt") || !strings.Contains(err.Error(), "Format") {
		t.Errorf("out.txt: %v, want an error naming the file and Files.Format", err)
	}
	for _, p := range []string{bad.Traces, bad.Certificate} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused write left %s", p)
		}
	}
}

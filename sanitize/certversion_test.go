package sanitize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// testdata/certificate-v4.json was written by the code before the path was
// renamed (certificate version 4, the path under "method"): the seeded
// release of TestCertificateRoundTrip. It must read as the current version
// for one release, with the same path and the same noise.
func TestCertificateVersion4StillRead(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile("testdata/certificate-v4.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(old, []byte(`"version": 4,`)) || !bytes.Contains(old, []byte(`"method": "linear"`)) {
		t.Fatal("the fixture is not a version-4 certificate with its path under \"method\"")
	}
	back, err := ReadCertificate(bytes.NewReader(old))
	if err != nil {
		t.Fatalf("version 4 refused: %v", err)
	}
	if back.Version != CertificateVersion || back.Path != PathLinear {
		t.Fatalf("read version %d path %q, want %d %q", back.Version, back.Path, CertificateVersion, PathLinear)
	}
	// Read as version 4, it is the same certificate as the same document
	// with today's key and version: the same noise, and written back it
	// differs from version 4's only by the key and the version. (It is
	// not compared with today's release of the same trace: the design
	// may change between versions, the reading of the old one may not.)
	cur := strings.Replace(strings.Replace(string(old), `"version": 4,`, fmt.Sprintf(`"version": %d,`, CertificateVersion), 1), `"method":`, `"path":`, 1)
	now5, err := ReadCertificate(strings.NewReader(cur))
	if err != nil {
		t.Fatalf("the same document with today's key and version: %v", err)
	}
	ts := secondsOf(t, walk(25, 39.98, 116.30).Points)
	g1, err1 := now5.NoiseCovariance(now5.Persons[0], ts)
	g2, err2 := back.NoiseCovariance(back.Persons[0], ts)
	if err1 != nil || err2 != nil || !mat.Equal(g1, g2) {
		t.Fatalf("version 4's noise differs from the same certificate's under today's key: %v %v", err1, err2)
	}
	var now bytes.Buffer
	if err := WriteCertificate(&now, back); err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(now.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(old, &b); err != nil {
		t.Fatal(err)
	}
	if a["path"] != "linear" || a["method"] != nil || a["version"] != float64(CertificateVersion) {
		t.Fatalf("written: path %v method %v version %v", a["path"], a["method"], a["version"])
	}
	b["path"], b["version"] = b["method"], a["version"]
	delete(b, "method")
	for k := range a {
		ja, _ := json.Marshal(a[k])
		jb, _ := json.Marshal(b[k])
		if !bytes.Equal(ja, jb) {
			t.Errorf("%q differs from version 4's beyond the key:\n%.300s\n%.300s", k, ja, jb)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d keys now, %d in version 4", len(a), len(b))
	}
}

// Negative controls: a version-4 document that already says "path", a
// current one that says "method", and version 3 are refused.
func TestCertificateVersionKeysRefused(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile("testdata/certificate-v4.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"v4 with path":   strings.Replace(string(old), `"method":`, `"path":`, 1),
		"v5 with method": strings.Replace(string(old), `"version": 4,`, `"version": 5,`, 1),
		"v3":             strings.Replace(string(old), `"version": 4,`, `"version": 3,`, 1),
	} {
		if _, err := ReadCertificate(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

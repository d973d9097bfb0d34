package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/ledgertest"
	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/internal/testrun"
	"github.com/tracepriv/tracepriv/pipeline/internal/filestate"
	"github.com/tracepriv/tracepriv/sanitize"
)

// childEnv, when set, makes the test binary run tracepriv-pipeline with the
// arguments after "--" instead of the tests: a real process to kill.
const childEnv = "TRACEPRIV_PIPELINE_TEST_CHILD"

func TestMain(m *testing.M) {
	if args, ok := testrun.ChildArgs(childEnv); ok {
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	code := m.Run()
	pgtest.StopShared() // ledgertest's PostgreSQL cluster
	os.Exit(code)
}

// killWait bounds the wait for the first certificate of a killed run: far
// more than a busy machine needs, so that it fails only on a run that
// never writes one.
const killWait = 15 * time.Minute

// killAfterFirstCertificate runs tracepriv-pipeline args, a release into
// out, in a child process, and kills it (SIGKILL) as soon as a certificate
// of some group of people has landed under out/certificates: polled on the
// file system, never a fixed sleep. It skips the test if the run finished
// first (no crash to check).
func killAfterFirstCertificate(t *testing.T, out string, args []string) {
	t.Helper()
	ready := func() bool { return len(certificates(t, out)) > 0 }
	stderr := testrun.KillWhen(t, childEnv, args, ready, killWait, 0)
	if _, err := os.Stat(filepath.Join(out, sanitize.ManifestName)); err == nil {
		t.Skipf("the run finished before it was killed; no crash to check; stderr:\n%s", stderr)
	}
}

// certificates returns the certificate files under out/certificates (not
// an atomic write's temporary file).
func certificates(t *testing.T, out string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, "certificates", "*"+sanitize.CertificateSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// leftBehind is what a killed run left of each person under out: their
// certificate's epsilon where it landed, the target where only files (or
// temporary files) of theirs did (the charge stays at the upper bound),
// nothing (absent) where nothing did.
func leftBehind(t *testing.T, out string, uids []string, target float64) map[string]float64 {
	t.Helper()
	left := map[string]float64{}
	for _, f := range certificates(t, out) {
		c, err := sanitize.ReadCertificateFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range c.Persons {
			left[p.UID] = p.EpsilonMax
		}
	}
	for _, uid := range uids {
		if _, ok := left[uid]; ok {
			continue
		}
		for _, pat := range []string{filepath.Join(out, uid, "*"), filepath.Join(out, uid, ".*"), filepath.Join(out, "certificates", "."+uid+"*")} {
			if m, _ := filepath.Glob(pat); len(m) > 0 {
				left[uid] = target
			}
		}
	}
	return left
}

// charge is one charge of a person: what it costs, and whether it is
// pending.
type charge struct {
	eps     float64
	pending bool
}

// crashLedger is the --ledger of a crash test, read back: a ledger file or
// the service's database.
type crashLedger struct {
	flag string
	// charges returns the person's charges that count (not undone).
	charges func(uid string) []charge
	// state is the whole ledger, to compare before and after a refusal.
	state func() string
}

// TestSanitizeSIGKILLSettled: a tracepriv-pipeline sanitize run killed
// (SIGKILL) after some person's release landed leaves every person charged
// at most the target, pending; a run of other options to another output
// leaves the first release's pending charges as they are and says they
// exist; the next run of the first release settles them from what the
// killed run left (a certificate: its epsilon; files without one: the
// target; nothing: undone) and resumes it: the groups whose certificate
// landed are kept (their files not written again, counted in
// resumed_units, charged once: the killed run's charge settled to their
// certificate), the others released and charged; so that every person
// is charged exactly the certified epsilons of the releases of theirs
// that landed, with nothing pending; and a run of other options to a killed run's --output is
// refused with the ledger unchanged (the files there are that release's). With a JSON
// ledger file and with the service's database (SQLite; PostgreSQL in the
// full suite). Before issue 31 item 3 the pipeline keyed each run by a
// random nonce: the next run left the killed run's charges pending at the
// target forever, on top of its own.
func TestSanitizeSIGKILLSettled(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.json")
		testSanitizeSIGKILLSettled(t, crashLedger{flag: path,
			charges: func(uid string) []charge {
				l, err := budget.Read(path)
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				var cs []charge
				for _, c := range l.Charges {
					if c.UID == uid {
						cs = append(cs, charge{c.Epsilon, c.Pending})
					}
				}
				return cs
			},
			state: func() string { b, _ := os.ReadFile(path); return string(b) },
		}, func(string) {})
	})
	ledgertest.Each(t, func(t *testing.T, db *ledgertest.ServiceDB) {
		testSanitizeSIGKILLSettled(t, crashLedger{flag: db.Ledger,
			charges: func(uid string) []charge {
				cs, spent := db.Charges(uid)
				var out []charge
				sum := 0.0
				for _, c := range cs {
					sum += c.Epsilon
					if c.Settlement != "undone" {
						out = append(out, charge{c.Epsilon, c.Settlement == "pending"})
					}
				}
				if math.Abs(spent-sum) > 1e-9 {
					t.Errorf("%s: spent %v, the sum of its charges %v", uid, spent, sum)
				}
				return out
			},
			state: func() string { r, f := db.Rows(); return r + string(f) },
		}, func(uid string) { db.Create(uid, 100) })
	})
}

func testSanitizeSIGKILLSettled(t *testing.T, led crashLedger, create func(uid string)) {
	data := geolife(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	// One GeoLife file a person, so that a group is quick but the run
	// has several to kill it between.
	files, _ := filepath.Glob(filepath.Join(data, "000", "*.plt"))
	if len(files) < 4 {
		t.Fatalf("GeoLife 000: %d files", len(files))
	}
	var uids []string
	for i, f := range files[:6] {
		uid := "p" + string(rune('0'+i))
		uids = append(uids, uid)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(in, uid), 0o755)
		if err := os.WriteFile(filepath.Join(in, uid, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		create(uid)
	}
	priorFile := filepath.Join("..", "..", "..", "internal", "sample", "prior.json")
	args := func(out, eps string) []string {
		return []string{"sanitize", "--input", in, "--corpus", "--output", out, "--prior", priorFile, "--epsilon", eps, "--lambda", "2", "--radius", "100",
			"--allow-prior-overlap", "--ledger", led.flag}
	}
	pipe := func(args []string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		return code, stderr.String()
	}
	sum := func(cs []charge) (s float64, pending int) {
		for _, c := range cs {
			s += c.eps
			if c.pending {
				pending++
			}
		}
		return s, pending
	}
	outA := filepath.Join(dir, "a")
	killAfterFirstCertificate(t, outA, args(outA, "1"))
	left := leftBehind(t, outA, uids, 1)
	t.Logf("killed with %d of %d people's certificates or files under --output: %v", len(left), len(uids), left)
	// Every person charged once, pending at the target: at most what
	// could have been released.
	for _, uid := range uids {
		cs := led.charges(uid)
		if len(cs) != 1 || !cs[0].pending || math.Abs(cs[0].eps-1) > 1e-12 {
			t.Errorf("%s after the kill: charges %+v, want one pending at the target 1", uid, cs)
		}
	}

	// Other options to another output: the killed release's pending
	// charges stay as they are, and the run says so.
	outB := filepath.Join(dir, "b")
	code, stderr := pipe(args(outB, "0.9"))
	if code != 0 {
		t.Fatalf("a release of other options: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "also have charges pending") {
		t.Errorf("a release of other options does not say that the killed release's charges are pending:\n%s", stderr)
	}
	certB := manifestEpsilons(t, outB)
	for _, uid := range uids {
		cs := led.charges(uid)
		s, pending := sum(cs)
		if pending != 1 || math.Abs(s-(1+certB[uid])) > 1e-9 {
			t.Errorf("%s after a release of other options: charges %+v, want the killed run's 1 pending and the certified %v", uid, cs, certB[uid])
		}
	}

	// The same release again: it settles the killed run's charges first,
	// and keeps the groups whose certificate landed (with it their files:
	// a group's files land before its certificate), not writing them
	// again.
	kept := map[string]bool{}
	landed := map[string]string{}
	for _, f := range certificates(t, outA) {
		c, err := sanitize.ReadCertificateFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(outA, c.Persons[0].UID, "*"))
		for _, p := range append(files, f) {
			landed[p] = filestate.Of(t, p)
		}
		kept[c.Persons[0].UID] = true
	}
	code, stderr = pipe(args(outA, "1"))
	if code != 0 {
		t.Fatalf("the next run of the killed release: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "stopped before it settled") || !strings.Contains(stderr, "it left whole under --output are kept") {
		t.Errorf("the next run does not say what it settled and kept:\n%s", stderr)
	}
	certA := manifestEpsilons(t, outA)
	for p, st := range landed {
		if got := filestate.Of(t, p); got != st {
			t.Errorf("%s, of a group the killed run had landed, was written again", p)
		}
	}
	if r := manifestResumed(t, outA); r != len(kept) {
		t.Errorf("resumed_units %d, want the %d groups whose certificate had landed", r, len(kept))
	}
	for _, uid := range uids {
		cs := led.charges(uid)
		s, pending := sum(cs)
		want := left[uid] + certB[uid] + certA[uid]
		if _, ok := certA[uid]; !ok {
			t.Errorf("%s is not in the resumed release's manifest", uid)
		}
		if kept[uid] {
			// One charge of this release, the killed run's, settled to
			// the certificate kept; and the other release's.
			want = left[uid] + certB[uid]
			if len(cs) != 2 || certA[uid] != left[uid] {
				t.Errorf("%s, kept: charges %+v, certified %v: want the killed run's settled to the kept certificate's %v and the other release's", uid, cs, certA[uid], left[uid])
			}
		}
		if pending != 0 || math.Abs(s-want) > 1e-9 {
			t.Errorf("%s after the next run: charges %+v (sum %v, %d pending), want %v settled: the killed run's %v, the other release's %v and this run's certified %v (kept: %v)",
				uid, cs, s, pending, want, left[uid], certB[uid], certA[uid], kept[uid])
		}
	}
	if _, err := os.Stat(filepath.Join(outA, ".tracepriv-pipeline-release")); err == nil {
		t.Error("the finished release left its marker")
	}

	// Other options to the output of another killed run: refused, the
	// ledger unchanged (the files there settle that release's charges).
	outC := filepath.Join(dir, "c")
	killAfterFirstCertificate(t, outC, args(outC, "1"))
	before := led.state()
	if code, stderr := pipe(args(outC, "0.9")); code != 1 || !strings.Contains(stderr, "holds part of a release with other options") {
		t.Errorf("other options to a killed run's --output: exit %d\n%s", code, stderr)
	}
	if led.state() != before {
		t.Error("the refused run changed the ledger")
	}
}

// manifestResumed is the resumed_units of the manifest of the release in
// out.
func manifestResumed(t *testing.T, out string) int {
	t.Helper()
	var m struct {
		Resumed int `json:"resumed_units"`
	}
	b, err := os.ReadFile(filepath.Join(out, sanitize.ManifestName))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest of %s: %v %s", out, err, b)
	}
	return m.Resumed
}

// manifestEpsilons is the certified epsilon of each person of the release
// in out, from its manifest.
func manifestEpsilons(t *testing.T, out string) map[string]float64 {
	t.Helper()
	var m struct {
		Persons []struct {
			UID        string  `json:"uid"`
			EpsilonMax float64 `json:"epsilon_max"`
		} `json:"persons"`
	}
	b, err := os.ReadFile(filepath.Join(out, sanitize.ManifestName))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest of %s: %v %s", out, err, b)
	}
	eps := map[string]float64{}
	for _, p := range m.Persons {
		eps[p.UID] = p.EpsilonMax
	}
	return eps
}

package sanitize

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/noise"
)

// ErrNoUID is Epsilons' error for a person without a uid: the budget
// ledger is kept per person.
var ErrNoUID = errors.New("a trace has no uid, and the ledger is kept per person")

// Epsilons is each person's certified epsilon_max, by uid: what a
// release that landed is settled to in the budget ledger.
func (c *Certificate) Epsilons() (map[string]float64, error) {
	eps := map[string]float64{}
	for _, p := range c.Persons {
		if p.UID == "" {
			return nil, ErrNoUID
		}
		eps[p.UID] = p.EpsilonMax
	}
	return eps, nil
}

// ReleaseKey is the budget ledger's key of the corpus release o
// describes, with the prior file's bytes: a hash (budget.ReleaseKey) of
// the absolute output directory and everything the noise depends on, so
// that a run resumed with the same options settles what an interrupted
// one left pending. The origin is not in the key: the release does not
// depend on it.
func (o CorpusOptions) ReleaseKey(prior []byte) (string, error) {
	return o.Release.ReleaseKey("sanitize corpus", o.Out, prior)
}

// ReleaseKey is the budget ledger's key of a release with these options
// (and the prior file's bytes) by kind of command to the output out: a
// hash (budget.ReleaseKey) of out's absolute path and everything the
// noise depends on, never a path in clear, so that the next run of the
// same release finds what a killed one left pending.
func (o Options) ReleaseKey(kind, out string, prior []byte) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	return budget.ReleaseKey(kind, abs, string(prior), string(o.Design), string(o.Path), noise.Describe(o.Source),
		fmt.Sprint(o.Epsilon, o.Lambda, o.Radius, o.Delta)), nil
}

// CertificateEpsilons reads a certificate and gives each person's
// certified epsilon_max (Epsilons): how the release of a killed run is
// settled from what it left on disk.
func CertificateEpsilons(b []byte) (map[string]float64, error) {
	c, err := ReadCertificate(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return c.Epsilons()
}

// FileReleaseKey is the budget ledger's key of releases to the output
// file out (a hash of its absolute path, never the path), so that the
// next release to it can settle what a killed one left pending
// (SettleLeftovers).
func FileReleaseKey(out string) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	return budget.ReleaseKey("sanitize file", abs), nil
}

// SettleLeftovers resolves the charges that an earlier release to the
// same output (key, FileReleaseKey) left pending in lf when it was killed
// between its charge and its settlement: if the output, its certificate
// or a temporary file of either is there, something may have landed and
// the charge is kept, settled to the certificate's epsilons if the
// certificate reads and is within the charge, else at its upper bound; if
// none is there, nothing of it landed and the charge is removed. In doubt
// the charge is kept.
func SettleLeftovers(lf budget.Store, key, out, certFile string) error {
	if lf == nil || key == "" {
		return nil
	}
	pending, err := lf.PendingReleases(key + " ")
	if err != nil {
		return err
	}
	for _, rel := range pending {
		if !landed(out, certFile) {
			if err := lf.UndoPeople(rel, nil); err != nil {
				return err
			}
			continue
		}
		var eps map[string]float64
		if cert, err := ReadCertificateFile(certFile); err == nil {
			eps, _ = cert.Epsilons()
		}
		if err := lf.Settle(rel, eps); err != nil {
			if err := lf.Settle(rel, nil); err != nil { // a certificate above the charge is not this release's
				return err
			}
		}
	}
	return nil
}

// landed reports whether any of paths, or an atomic write's temporary
// file of one, may be there (in doubt, yes).
func landed(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
		dir, base := filepath.Split(p)
		if m, err := filepath.Glob(filepath.Join(dir, "."+base+".tmp-*")); err != nil || len(m) > 0 {
			return true
		}
	}
	return false
}

package budget

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
)

// ReleaseKey names a release that spans runs (a corpus run resumed, an
// output a killed run left pending) by a hash of its parts, so that no
// local path goes into the ledger: kind, a space, and 16 hex digits.
func ReleaseKey(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return kind + " " + hex.EncodeToString(h.Sum(nil))[:16]
}

// Nonce is a random key part, for a release that no later run resumes.
func Nonce() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b)
}

// NewRequest is a charge of one release by command of mechanism m,
// written to out, named by a fresh key (ReleaseKey of a Nonce); budget
// and raise are the run's --budget and --raise-budget.
func NewRequest(m Mechanism, command, out string, budget float64, raise bool) Request {
	return Request{Mechanism: m, Budget: budget, RaiseBudget: raise, Command: command, Output: out,
		Epsilon: map[string]float64{}, Release: ReleaseKey(command, Nonce())}
}

// WriteText writes the ledger's accounts, a line each after a count of
// people and charges: budget, spending, currency, and spending by
// mechanism.
func (l *Ledger) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%d people, %d charges\n", len(l.Accounts), len(l.Charges)); err != nil {
		return err
	}
	for _, a := range l.Accounts {
		b := "no budget"
		if a.Budget != nil {
			b = fmt.Sprintf("budget %.6g", *a.Budget)
		}
		if _, err := fmt.Fprintf(w, "person %q: spent %.6g, %s (Rényi at lambda %g within %g m; cip %.6g, geoind %.6g)\n",
			a.UID, a.Spent, b, a.Lambda, a.RadiusM, l.Spent(a.UID, CIP), l.Spent(a.UID, GeoInd)); err != nil {
			return err
		}
	}
	return nil
}

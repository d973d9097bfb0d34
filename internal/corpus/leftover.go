package corpus

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/tracepriv/tracepriv/trace"
)

// Leftover is what an earlier run of a corpus release left under its
// output of each person it charged pending and never settled (it was
// killed between the charge and the settlement): the Beam pipeline's
// release, which charges every person under one key before its job runs.
// The single-machine runner, which charges unit by unit, settles its own
// in settleCrashed; both judge a unit by the same tests (landed,
// certificateOn).
type Leftover struct {
	// Settled are the certified epsilons of the people whose unit's
	// certificate is under out and names exactly the unit's people.
	Settled map[string]float64
	// Undone are the people nothing of whom is under out: no file of
	// their unit, no certificate, no temporary file of either (or who
	// were released under another name, Unit.Alias, whose unit's
	// certificate is there). Their charge goes.
	Undone []string
	// Kept are the people whose unit left something under out but no
	// certificate naming exactly its people, or who are in no unit of the
	// corpus as it is now: in doubt, their charge stays at its upper bound.
	Kept []string
}

// Leftovers judges the people pending, charged by an earlier run of the
// release of units from the corpus root in to out, by what that run left
// under out. epsilons reads a certificate's certified epsilons by uid (as
// Config.Epsilons); suffix is the certificates' (Sanitizer's).
func Leftovers(pending []string, units []Unit, suffix, in, out string, epsilons func([]byte) (map[string]float64, error)) Leftover {
	var l Leftover
	for _, uid := range pending {
		i := slices.IndexFunc(units, func(u Unit) bool {
			_, alias := u.Alias[uid]
			return alias || slices.Contains(u.UIDs, uid)
		})
		if i < 0 {
			l.Kept = append(l.Kept, uid)
			continue
		}
		u := units[i]
		if !landed(u, suffix, in, out) {
			l.Undone = append(l.Undone, uid)
			continue
		}
		eps := certificateOn(u, suffix, out, epsilons)
		switch e, ok := eps[uid]; {
		case ok:
			if l.Settled == nil {
				l.Settled = map[string]float64{}
			}
			l.Settled[uid] = e
		case eps != nil && !slices.Contains(u.UIDs, uid):
			// Released as the person it was joined to, whose charge
			// covers it.
			l.Undone = append(l.Undone, uid)
		default:
			l.Kept = append(l.Kept, uid)
		}
	}
	return l
}

// LandedUnit is a unit's release that an earlier run left whole under its
// output, read back (ReadLanded) for the caller to check against the
// certificate before it keeps the release rather than drawing it again.
type LandedUnit struct {
	// Inputs are the unit's files relative to the corpus root (the paths
	// of its output files relative to the output directory).
	Inputs []string
	// Traces are the traces of each output file, in the order of Inputs:
	// together, in that order, the traces the release was drawn for
	// (ReleaseUnit writes each file's in input order).
	Traces [][]*trace.Trace
	// Certificate is the certificate's content, and CertificateFile its
	// path relative to the output directory, slash-separated.
	Certificate     []byte
	CertificateFile string
}

// ReadLanded reads back what an earlier release of the unit u from the
// corpus root in left under out: every output file, read with ro (its
// format and time zone; strictly, and without the person rule: a file
// the release wrote reads clean), and the certificate. It fails if any
// of them is missing or unreadable, or a temporary file of one is there
// (a write of the unit was cut, so what is there may be part of another
// draw). Whether the files match the certificate is the caller's check.
func ReadLanded(u Unit, suffix string, ro trace.ReadOptions, in, out string) (*LandedUnit, error) {
	ro.Root, ro.Corpus, ro.UID, ro.Strict = "", false, "", true
	l := &LandedUnit{Inputs: Rel(in, u.Files), CertificateFile: path.Join(CertificatesDir, certName(u.UIDs, suffix))}
	for _, p := range outputsOf(u, suffix, in, out) {
		if tmps, err := tempFiles(p); err != nil || len(tmps) > 0 {
			return nil, fmt.Errorf("%s: a write of it was cut (%d temporary files)", p, len(tmps))
		}
	}
	for _, r := range l.Inputs {
		ts, _, err := trace.ReadFile(filepath.Join(out, filepath.FromSlash(r)), ro)
		if err != nil {
			return nil, err
		}
		l.Traces = append(l.Traces, ts)
	}
	var err error
	if l.Certificate, err = os.ReadFile(filepath.Join(out, filepath.FromSlash(l.CertificateFile))); err != nil {
		return nil, err
	}
	return l, nil
}

package pipeline

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// landedRecord is the manifest's record of the unit u that an earlier,
// killed run of this release left whole under the output, rebuilt from
// what is there and checked, never trusted: every output file and the
// certificate present with no temporary file beside them
// (corpus.ReadLanded), the certificate naming exactly the unit's people
// at this release's target, ledger, order, radius and kind of randomness
// (private or seeded), each within the target, and each trace it
// certifies found at its place in the output files with its points,
// start and end. The files each person's traces are in come
// from where those traces are. An error says why the unit is in doubt
// (it is then released again).
func landedRecord(u corpus.Unit, c sanitizeConfig, ro trace.ReadOptions) (groupRecord, error) {
	l, err := corpus.ReadLanded(u, sanitize.CertificateSuffix, ro, c.Root, c.Out)
	if err != nil {
		return groupRecord{}, err
	}
	cert, err := sanitize.ReadCertificate(bytes.NewReader(l.Certificate))
	if err != nil {
		return groupRecord{}, fmt.Errorf("%s: %w", l.CertificateFile, err)
	}
	// The marker ties the output to this release's options; the
	// certificate must say so too (a file put there by hand must not pass
	// a seeded draw, or one at another order or radius, as this release).
	if cert.EpsilonTarget != c.Epsilon || cert.Ledger != c.Ledger || cert.Lambda != c.Lambda || cert.RadiusM != c.Radius || cert.Private == c.Seeded {
		return groupRecord{}, fmt.Errorf("%s: target epsilon %v, ledger %q, lambda %v, radius %v m, private %v: not this release's (%v, %q, %v, %v m, %v)",
			l.CertificateFile, cert.EpsilonTarget, cert.Ledger, cert.Lambda, cert.RadiusM, cert.Private, c.Epsilon, c.Ledger, c.Lambda, c.Radius, !c.Seeded)
	}
	uids := make([]string, len(cert.Persons))
	for i, p := range cert.Persons {
		uids[i] = p.UID
		if !(p.EpsilonMax <= c.Epsilon) {
			return groupRecord{}, fmt.Errorf("%s: person %q certified %v, above the target %v", l.CertificateFile, p.UID, p.EpsilonMax, c.Epsilon)
		}
	}
	slices.Sort(uids)
	if !slices.Equal(uids, u.UIDs) {
		return groupRecord{}, fmt.Errorf("%s names %v, not the group's people %v", l.CertificateFile, uids, u.UIDs)
	}
	// The traces in release order, with the output file of each.
	var all []*trace.Trace
	var in []int
	for fi, ts := range l.Traces {
		for _, t := range ts {
			all, in = append(all, t), append(in, fi)
		}
	}
	owner := make([]string, len(all))
	for _, p := range cert.Persons {
		for _, ti := range p.Traces {
			if ti.Index < 0 || ti.Index >= len(all) || owner[ti.Index] != "" {
				return groupRecord{}, fmt.Errorf("%s: trace %d of person %q is not in the output files (%d traces)", l.CertificateFile, ti.Index, p.UID, len(all))
			}
			t := all[ti.Index]
			if t.Len() != ti.Points || !t.Points[0].Time.Equal(ti.Start) || !t.Points[t.Len()-1].Time.Equal(ti.End) {
				return groupRecord{}, fmt.Errorf("%s: trace %d of person %q does not match %s (%d points)", l.CertificateFile, ti.Index, p.UID, l.Inputs[in[ti.Index]], t.Len())
			}
			owner[ti.Index] = p.UID
		}
	}
	files := map[string][]string{}
	for i, uid := range owner {
		if uid == "" {
			return groupRecord{}, fmt.Errorf("%s: trace %d of %s is certified for nobody", l.CertificateFile, i, l.Inputs[in[i]])
		}
		if f := l.Inputs[in[i]]; !slices.Contains(files[uid], f) {
			files[uid] = append(files[uid], f)
		}
	}
	return groupRecord{Persons: cert.ManifestPersons(l.CertificateFile, files), SkippedRows: cert.SkippedRows, SkippedBy: cert.SkippedByReason, Resumed: true}, nil
}

// landedUnits finds the units of the input scanned that a killed run of
// this release left whole under the output (landedRecord), by their key
// (corpus.UnitKey), sorted, and their people (with the names joined into
// them, Unit.Alias): the release keeps them. With a ledger (st not nil),
// only units whose people's charges that run left pending were settled to
// the certificate (st.Settled) are kept: the others' people would be
// released without a charge that counts this release.
func landedUnits(scans []corpus.FileScan, c sanitizeConfig, st *Settlement) (keys, people []string, err error) {
	_, ro, err := c.options()
	if err != nil {
		return nil, nil, err
	}
	units, _ := corpus.GroupUnits(scans)
	for _, u := range units {
		if st != nil && slices.ContainsFunc(u.UIDs, func(uid string) bool { _, ok := st.Settled[uid]; return !ok }) {
			continue
		}
		if _, err := landedRecord(u, c, ro); err != nil {
			continue
		}
		keys = append(keys, corpus.UnitKey(corpus.Rel(c.Root, u.Files)))
		people = append(people, u.UIDs...)
		for name := range u.Alias {
			people = append(people, name)
		}
	}
	slices.Sort(keys)
	return keys, people, nil
}

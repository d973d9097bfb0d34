package trace

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
)

// CorpusIndexVersion is the version of the corpus index file format
// (CorpusIndex.Write).
const CorpusIndexVersion = 1

// Fix matching (docs/fit.md, "The overlap check"). A fix is keyed by its
// Unix second and its latitude and longitude rounded to a grid of
// FixGridDeg degrees (about 1.1 m); a fix of a trace matches a corpus fix
// whose key is within one second and one grid step in each coordinate. So
// a fix matches every corpus fix less than a grid step away in latitude and
// in longitude and at most a second apart (the same fix written with five
// or more decimals, in another format or time zone, or with sub-second
// times rounded), and never one more than two grid steps or two seconds
// away.
const (
	// FixGridDeg is the grid step, in degrees, of a fix's key.
	FixGridDeg = 1e-5
	// FixTimeToleranceS and FixGridTolerance are the tolerances of a
	// match, in seconds and in grid steps.
	FixTimeToleranceS = 1
	FixGridTolerance  = 1
)

// fixCell is a fix's key before hashing.
type fixCell struct{ s, lat, lon int64 }

// cellOf returns the key of a valid point; ok is false for a point
// without a usable time or position.
func cellOf(p Point) (fixCell, bool) {
	if p.Time.IsZero() || p.Geo().Validate() != nil {
		return fixCell{}, false
	}
	return fixCell{p.Time.Unix(), int64(math.Round(p.Lat / FixGridDeg)), int64(math.Round(p.Lon / FixGridDeg))}, true
}

// hash is the 64-bit key of a cell: the first 8 bytes of SHA-256 with a
// domain prefix. 64 bits keep accidental collisions below 1e-12 per probe
// for corpora of millions of fixes; SHA-256 keeps a key from being inverted
// by arithmetic (it can be by guessing: see CorpusIndex).
func (c fixCell) hash() uint64 {
	var buf [14 + 24]byte
	copy(buf[:], "tracepriv fix\x00")
	binary.LittleEndian.PutUint64(buf[14:], uint64(c.s))
	binary.LittleEndian.PutUint64(buf[22:], uint64(c.lat))
	binary.LittleEndian.PutUint64(buf[30:], uint64(c.lon))
	s := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(s[:8])
}

// FixHashes returns the sorted, distinct keys of the valid fixes of
// traces, as a corpus index records them. Keys of parts of a corpus merge
// with MergeFixHashes.
func FixHashes(traces ...*Trace) []uint64 {
	var hs []uint64
	for _, t := range traces {
		for _, p := range t.Points {
			if c, ok := cellOf(p); ok {
				hs = append(hs, c.hash())
			}
		}
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// MergeFixHashes returns the sorted union of two sorted, distinct key
// lists, in time linear in their lengths (a corpus's parts merge in turn).
func MergeFixHashes(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// CorpusIndex is what the overlap check of package sanitize needs to know
// of a prior's fitting corpus: a 64-bit key of every fix (see FixGridDeg)
// and the PersonFingerprint of every person id. "tracepriv fit" writes it
// beside the prior (prior.CorpusIndexPath), and it records the prior's digest.
//
// It is private. Whoever holds it can test whether a trace they hold was
// in the corpus, and, since a key covers one fix, can recover fixes by
// guessing times and positions (a fix is a few dozen bits of entropy, and
// the next fix is near the last). It is therefore kept out of the public
// prior file and out of every certificate; share it only with whoever
// may read the corpus itself.
type CorpusIndex struct {
	Version int `json:"version"`
	// Note says what the file is, for whoever finds it.
	Note string `json:"note"`
	// Fixes is the number of keys.
	Fixes int `json:"fixes"`
	// FixKeys holds the sorted keys, delta-encoded as unsigned varints,
	// base64 (standard, padded).
	FixKeys string `json:"fix_keys"`
	// Persons are the sorted PersonFingerprints of the corpus's ids.
	Persons []string `json:"persons,omitempty"`
	// Prior is the digest (prior.Prior.Digest) of the prior fitted on the
	// corpus: sanitize refuses to check a release with the index of
	// another prior.
	Prior string `json:"prior"`

	keys []uint64
}

// CorpusIndexNote is CorpusIndex.Note.
const CorpusIndexNote = "PRIVATE: keys of every fix of a prior's fitting corpus, for tracepriv sanitize's overlap check (docs/fit.md). " +
	"Whoever holds this file can test whether a trace was in the corpus and recover its fixes by guessing: do not publish it."

// NewCorpusIndex returns the index of a corpus with the fix keys keys
// (FixHashes, possibly merged; sorted and distinct) and the person ids
// uids (empty ids are ignored).
func NewCorpusIndex(keys []uint64, uids []string) *CorpusIndex {
	x := &CorpusIndex{Version: CorpusIndexVersion, Note: CorpusIndexNote, Fixes: len(keys), keys: slices.Clone(keys)}
	for _, u := range uids {
		if p := PersonFingerprint(u); p != "" {
			x.Persons = append(x.Persons, p)
		}
	}
	slices.Sort(x.Persons)
	x.Persons = slices.Compact(x.Persons)
	buf := make([]byte, 0, 8*len(keys))
	prev := uint64(0)
	for _, k := range x.keys {
		buf = binary.AppendUvarint(buf, k-prev)
		prev = k
	}
	x.FixKeys = base64.StdEncoding.EncodeToString(buf)
	return x
}

// CorpusIndexOf is NewCorpusIndex of traces' fixes and person ids.
func CorpusIndexOf(traces ...*Trace) *CorpusIndex {
	uids := make([]string, len(traces))
	for i, t := range traces {
		uids[i] = t.UID
	}
	return NewCorpusIndex(FixHashes(traces...), uids)
}

// Shared returns how many of t's valid fixes match a fix of the corpus
// (within FixTimeToleranceS seconds and FixGridTolerance grid steps in
// latitude and in longitude).
func (x *CorpusIndex) Shared(t *Trace) int {
	n := 0
	for _, p := range t.Points {
		if x.SharedPoint(p) {
			n++
		}
	}
	return n
}

// SharedPoint reports whether p matches a fix of the corpus.
func (x *CorpusIndex) SharedPoint(p Point) bool {
	c, ok := cellOf(p)
	if !ok || len(x.keys) == 0 {
		return false
	}
	for ds := int64(-FixTimeToleranceS); ds <= FixTimeToleranceS; ds++ {
		for dl := int64(-FixGridTolerance); dl <= FixGridTolerance; dl++ {
			for dn := int64(-FixGridTolerance); dn <= FixGridTolerance; dn++ {
				if _, hit := slices.BinarySearch(x.keys, fixCell{c.s + ds, c.lat + dl, c.lon + dn}.hash()); hit {
					return true
				}
			}
		}
	}
	return false
}

// HasPerson reports whether the corpus has a person with the id uid.
func (x *CorpusIndex) HasPerson(uid string) bool {
	p := PersonFingerprint(uid)
	_, hit := slices.BinarySearch(x.Persons, p)
	return p != "" && hit
}

// Write encodes the index as indented JSON.
func (x *CorpusIndex) Write(w io.Writer) error {
	return jsondoc.Write(w, x)
}

// ReadCorpusIndex decodes and checks an index.
func ReadCorpusIndex(r io.Reader) (*CorpusIndex, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var x CorpusIndex
	if err := jsondoc.DecodeVersion(b, CorpusIndexVersion, &x); err != nil {
		return nil, fmt.Errorf("corpus index: %w", err)
	}
	buf, err := base64.StdEncoding.DecodeString(x.FixKeys)
	if err != nil {
		return nil, fmt.Errorf("corpus index: field \"fix_keys\": %w", err)
	}
	x.keys = make([]uint64, 0, x.Fixes)
	prev := uint64(0)
	for len(buf) > 0 {
		d, n := binary.Uvarint(buf)
		if n <= 0 || (len(x.keys) > 0 && d == 0) {
			return nil, errors.New("corpus index: field \"fix_keys\": not a sorted list of distinct keys")
		}
		prev += d
		x.keys = append(x.keys, prev)
		buf = buf[n:]
	}
	if len(x.keys) != x.Fixes {
		return nil, fmt.Errorf("corpus index: field \"fixes\": %d, but \"fix_keys\" holds %d", x.Fixes, len(x.keys))
	}
	if !slices.IsSorted(x.Persons) {
		return nil, errors.New("corpus index: field \"persons\": not sorted")
	}
	return &x, nil
}

// ReadCorpusIndexFile reads an index file, naming the file in errors.
func ReadCorpusIndexFile(path string) (*CorpusIndex, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := ReadCorpusIndex(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

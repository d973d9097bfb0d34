package trace

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
)

// Fingerprint identifies a trace's content without revealing it: "t:" and
// the first 128 bits (hex) of SHA-256 over its points in time order, each
// as Unix seconds and latitude and longitude rounded to 1e-5 degrees (about
// a metre), so that a trace read from another format, or with rows repaired
// differently below a metre, still matches. Priors of version 3 and below
// record the fingerprints of their fitting corpus (prior.FitRecord.Fingerprints),
// which sanitize still checks; version 4 keeps a private CorpusIndex of
// every fix instead, since a whole-trace hash is refused by dropping one fix
// and lets whoever publishes it be asked whether a trace was fitted.
func Fingerprint(t *Trace) string {
	type key struct{ s, lat, lon int64 }
	ks := make([]key, len(t.Points))
	for i, p := range t.Points {
		ks[i] = key{p.Time.Unix(), int64(math.Round(p.Lat * 1e5)), int64(math.Round(p.Lon * 1e5))}
	}
	slices.SortFunc(ks, func(a, b key) int {
		switch {
		case a.s != b.s:
			return cmpInt(a.s, b.s)
		case a.lat != b.lat:
			return cmpInt(a.lat, b.lat)
		}
		return cmpInt(a.lon, b.lon)
	})
	h := sha256.New()
	var buf [24]byte
	for _, k := range ks {
		binary.LittleEndian.PutUint64(buf[0:], uint64(k.s))
		binary.LittleEndian.PutUint64(buf[8:], uint64(k.lat))
		binary.LittleEndian.PutUint64(buf[16:], uint64(k.lon))
		h.Write(buf[:])
	}
	return "t:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// PersonFingerprint identifies a person id: "p:" and 128 bits of SHA-256
// of the uid. Ids are not secret here; the hash only keeps prior files
// uniform. An empty uid has no fingerprint ("").
func PersonFingerprint(uid string) string {
	if uid == "" {
		return ""
	}
	s := sha256.Sum256([]byte("tracepriv person\x00" + uid))
	return "p:" + hex.EncodeToString(s[:16])
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

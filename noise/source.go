package noise

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
)

// Source is where every tracepriv sampler draws its randomness from. It has
// the shape of math/rand/v2.Source so that either can wrap the other.
//
// Production code uses Secure. Seeded exists for tests and reproductions
// only; anything released with a seeded source must say so (see Describe).
type Source interface {
	Uint64() uint64
}

// secureSource reads crypto/rand into a 4 KiB buffer and hands it out 8
// bytes at a time. It is safe for concurrent use.
type secureSource struct {
	mu  sync.Mutex
	buf [4096]byte
	off int // next unread byte; len(buf) means empty
}

// Secure returns a source backed by crypto/rand. It panics only if the
// operating system's random source fails, as crypto/rand itself does.
func Secure() Source {
	return &secureSource{off: 4096}
}

func (s *secureSource) Uint64() uint64 {
	s.mu.Lock()
	if s.off == len(s.buf) {
		if _, err := io.ReadFull(crand.Reader, s.buf[:]); err != nil {
			s.mu.Unlock()
			panic("noise: crypto/rand failed: " + err.Error())
		}
		s.off = 0
	}
	u := binary.LittleEndian.Uint64(s.buf[s.off:])
	// Wipe what was handed out so the buffer never holds used randomness.
	clear(s.buf[s.off : s.off+8])
	s.off += 8
	s.mu.Unlock()
	return u
}

// seededSource is a deterministic ChaCha8 stream. It is NOT safe for
// concurrent use and NOT suitable for releasing data.
type seededSource struct {
	*rand.ChaCha8
	seed  uint64
	label string // "" for Seeded; the Derive label otherwise
}

// Seeded returns a deterministic source for tests and reproducible
// experiments. Output produced with it carries no privacy guarantee against
// anyone who knows or can guess the seed.
func Seeded(seed uint64) Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	copy(key[8:], "tracepriv-seeded-source")
	return &seededSource{ChaCha8: rand.NewChaCha8(key), seed: seed}
}

// Derive returns the source to use for one unit of work named label (a
// person's uid): for a seeded source, a seeded stream determined by the
// seed and the label alone, so that a seeded run gives every person the
// same noise however the work is split or ordered (Describe says
// "seeded:N/label"); for any other source, src itself (the secure source
// is safe for concurrent use).
func Derive(src Source, label string) Source {
	s, ok := src.(*seededSource)
	if !ok {
		return src
	}
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], s.seed)
	h.Write([]byte("tracepriv-derived-source\x00"))
	h.Write(b[:])
	h.Write([]byte(s.label + "\x00" + label))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	l := label
	if s.label != "" {
		l = s.label + "/" + label
	}
	return &seededSource{ChaCha8: rand.NewChaCha8(key), seed: s.seed, label: l}
}

// Describe names a source for certificates and reports: "crypto" for the
// secure source, "seeded:N" for a seeded one ("seeded:N/label" if derived),
// "custom" otherwise.
func Describe(src Source) string {
	switch s := src.(type) {
	case *secureSource:
		return "crypto"
	case *seededSource:
		if s.label != "" {
			return fmt.Sprintf("seeded:%d/%s", s.seed, s.label)
		}
		return fmt.Sprintf("seeded:%d", s.seed)
	default:
		return "custom"
	}
}

// IsSecure reports whether src is the crypto/rand-backed source.
func IsSecure(src Source) bool {
	_, ok := src.(*secureSource)
	return ok
}

package noise

import (
	"bufio"
	crand "crypto/rand"
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

// secureSource reads crypto/rand through a buffer. It is safe for concurrent
// use.
type secureSource struct {
	mu sync.Mutex
	r  *bufio.Reader
	b  [8]byte
}

// Secure returns a source backed by crypto/rand. It panics only if the
// operating system's random source fails, as crypto/rand itself does.
func Secure() Source {
	return &secureSource{r: bufio.NewReaderSize(crand.Reader, 1<<12)}
}

func (s *secureSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.ReadFull(s.r, s.b[:]); err != nil {
		panic("noise: crypto/rand failed: " + err.Error())
	}
	return binary.LittleEndian.Uint64(s.b[:])
}

// seededSource is a deterministic ChaCha8 stream. It is NOT safe for
// concurrent use and NOT suitable for releasing data.
type seededSource struct {
	*rand.ChaCha8
	seed uint64
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

// Describe names a source for certificates and reports: "crypto" for the
// secure source, "seeded:N" for a seeded one, "custom" otherwise.
func Describe(src Source) string {
	switch s := src.(type) {
	case *secureSource:
		return "crypto"
	case *seededSource:
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

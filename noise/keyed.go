package noise

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// streamKey derives independent, replayable random streams from one
// 256-bit secret: stream i is the AES-256 keystream in counter mode with
// counter blocks (i, 0), (i, 1), (i, 2), … (two big-endian 64-bit halves).
//
// Why this is a cryptographically secure generator: AES-256 is a
// pseudorandom permutation, hence (PRP/PRF switching lemma) a pseudorandom
// function up to an advantage of q²/2^129 after q blocks; the counter
// blocks of all streams are distinct as long as each index is used by one
// consumer and a stream stays below 2^64 blocks, so the concatenation of
// every stream is indistinguishable from independent uniform bits to anyone
// without the key. The key comes from the Source (crypto/rand by default),
// so it is as unpredictable as the Source; with a seeded Source it is a
// function of the seed, the release is deterministic, and Describe says so.
//
// What it buys: the deviate of index i can be drawn again, bit for bit, at
// any time and in any order, and refined further by reading on in its
// stream, without storing it. An exact release can thus revisit any of
// millions of deviates in O(1) memory, and a release's noise does not
// depend on how the work is split between goroutines or machines.
//
// The key is read into a local array, expanded by crypto/aes and the array
// wiped; it is never returned, written or logged. The expanded key schedule
// lives in the cipher's memory until it is garbage-collected: Go offers no
// way to wipe it.
type streamKey struct {
	block cipher.Block
}

// newStreamKey reads a 256-bit key from src (nil means crypto/rand).
func newStreamKey(src Source) (*streamKey, error) {
	src = orSecure(src)
	var key [32]byte
	for i := range 4 {
		binary.LittleEndian.PutUint64(key[8*i:], src.Uint64())
	}
	block, err := aes.NewCipher(key[:])
	clear(key[:])
	if err != nil {
		return nil, fmt.Errorf("noise: stream key: %w", err)
	}
	return &streamKey{block: block}, nil
}

// keyStream is one stream of a streamKey, a Source. It is cheap to reset
// to another index, so a sampler keeps one and moves it from deviate to
// deviate. Not safe for concurrent use.
type keyStream struct {
	block cipher.Block
	ctr   [16]byte // index, block number (big-endian)
	buf   [16]byte
	off   int // next unread byte of buf; 16 means empty
}

func (k *streamKey) stream(index uint64) *keyStream {
	s := &keyStream{block: k.block}
	s.reset(index)
	return s
}

// reset positions the stream at the start of stream index.
func (s *keyStream) reset(index uint64) {
	binary.BigEndian.PutUint64(s.ctr[:8], index)
	binary.BigEndian.PutUint64(s.ctr[8:], 0)
	clear(s.buf[:])
	s.off = 16
}

// Uint64 returns the next 8 bytes of the keystream.
func (s *keyStream) Uint64() uint64 {
	if s.off == 16 {
		s.block.Encrypt(s.buf[:], s.ctr[:])
		n := binary.BigEndian.Uint64(s.ctr[8:]) + 1
		if n == 0 {
			panic("noise: key stream exhausted (2^64 blocks)")
		}
		binary.BigEndian.PutUint64(s.ctr[8:], n)
		s.off = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.off:])
	s.off += 8
	return v
}

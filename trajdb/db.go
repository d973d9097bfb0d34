package trajdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// DB is a trajectory database: the sequences of each person over an
// alphabet of Size symbols, 0..Size-1.
type DB struct {
	// Size is the number of symbols (cells of the universe).
	Size  int
	Users []User
}

// User is one person's sequences.
type User struct {
	ID   string
	Seqs [][]int
}

// Validate reports whether every symbol is in the alphabet and every
// sequence is non-empty.
func (db *DB) Validate() error {
	if db.Size < 1 {
		return fmt.Errorf("trajdb: alphabet of %d symbols", db.Size)
	}
	for _, u := range db.Users {
		for j, s := range u.Seqs {
			if len(s) == 0 {
				return fmt.Errorf("trajdb: user %q: sequence %d is empty", u.ID, j+1)
			}
			for _, x := range s {
				if x < 0 || x >= db.Size {
					return fmt.Errorf("trajdb: user %q: sequence %d: symbol %d outside the alphabet [0, %d)", u.ID, j+1, x, db.Size)
				}
			}
		}
	}
	return nil
}

// Sequences returns every sequence of every person, in order.
func (db *DB) Sequences() [][]int {
	var out [][]int
	for _, u := range db.Users {
		out = append(out, u.Seqs...)
	}
	return out
}

// Len returns the number of sequences.
func (db *DB) Len() int {
	n := 0
	for _, u := range db.Users {
		n += len(u.Seqs)
	}
	return n
}

// Bounds caps what one person contributes.
type Bounds struct {
	// MaxLen truncates every sequence to its first MaxLen symbols.
	MaxLen int `json:"max_len"`
	// MaxSeqs keeps at most this many sequences per person (the first
	// ones).
	MaxSeqs int `json:"max_seqs"`
}

// UnmarshalJSON reads the bounds under their keys, max_len and max_seqs,
// and under the keys release.json had before issue 32 gave them tags
// (MaxLen, MaxSeqs), so that earlier releases still read. Other keys are
// refused, as jsondoc refuses them elsewhere.
//
// Deprecated keys MaxLen and MaxSeqs: read for one release, never written.
func (b *Bounds) UnmarshalJSON(data []byte) error {
	var v struct {
		MaxLen     *int `json:"max_len"`
		MaxSeqs    *int `json:"max_seqs"`
		OldMaxLen  *int `json:"MaxLen"`
		OldMaxSeqs *int `json:"MaxSeqs"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("bounds: %w", err)
	}
	pick := func(name string, cur, old *int) (int, error) {
		switch {
		case cur != nil && old != nil && *cur != *old:
			return 0, fmt.Errorf("bounds: %s %d and its old key %d disagree", name, *cur, *old)
		case cur != nil:
			return *cur, nil
		case old != nil:
			return *old, nil
		}
		return 0, nil
	}
	var err error
	if b.MaxLen, err = pick("max_len", v.MaxLen, v.OldMaxLen); err != nil {
		return err
	}
	b.MaxSeqs, err = pick("max_seqs", v.MaxSeqs, v.OldMaxSeqs)
	return err
}

// Validate reports whether both bounds are positive.
func (b Bounds) Validate() error {
	if b.MaxLen < 1 || b.MaxSeqs < 1 {
		return fmt.Errorf("trajdb: bounds need MaxLen >= 1 and MaxSeqs >= 1, got %d and %d", b.MaxLen, b.MaxSeqs)
	}
	return nil
}

// Bound returns a copy of db in which each person keeps at most
// b.MaxSeqs sequences, each truncated to b.MaxLen symbols: the contribution
// bounding that every mechanism's sensitivity assumes. It is a per-person
// transformation, so it keeps neighbours neighbours.
func Bound(db *DB, b Bounds) (*DB, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	out := &DB{Size: db.Size, Users: make([]User, 0, len(db.Users))}
	for _, u := range db.Users {
		seqs := u.Seqs[:min(len(u.Seqs), b.MaxSeqs)]
		nu := User{ID: u.ID, Seqs: make([][]int, len(seqs))}
		for j, s := range seqs {
			nu.Seqs[j] = slices.Clone(s[:min(len(s), b.MaxLen)])
		}
		out.Users = append(out.Users, nu)
	}
	return out, nil
}

// Without returns db without the person of index i (a neighbour).
func (db *DB) Without(i int) *DB {
	users := make([]User, 0, len(db.Users)-1)
	users = append(users, db.Users[:i]...)
	return &DB{Size: db.Size, Users: append(users, db.Users[i+1:]...)}
}

// With returns db with one more person (a neighbour).
func (db *DB) With(u User) *DB {
	out := &DB{Size: db.Size, Users: slices.Clone(db.Users)}
	out.Users = append(out.Users, u)
	return out
}

// seqCounts returns the multiset of sequences of db as keyed counts (Key).
func seqCounts(seqs [][]int) map[string]int {
	m := make(map[string]int)
	for _, s := range seqs {
		m[Key(s)]++
	}
	return m
}

// Key encodes a sequence as a map key.
func Key(s []int) string {
	b := make([]byte, 0, 4*len(s))
	for _, x := range s {
		b = append(b, byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
	}
	return string(b)
}

// FromKey decodes Key.
func FromKey(k string) []int {
	s := make([]int, len(k)/4)
	for i := range s {
		s[i] = int(k[4*i])<<24 | int(k[4*i+1])<<16 | int(k[4*i+2])<<8 | int(k[4*i+3])
	}
	return s
}

// sortedSequences returns seqs sorted (lexicographically, then by
// length), for comparisons and stable output.
func sortedSequences(seqs [][]int) [][]int {
	out := slices.Clone(seqs)
	sort.Slice(out, func(i, j int) bool { return slices.Compare(out[i], out[j]) < 0 })
	return out
}

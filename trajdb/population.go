package trajdb

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tracepriv/tracepriv/noise"
)

// MarkovPopulation returns a synthetic database of persons people with
// seqsPerPerson sequences each, drawn from the first-order Markov chain of
// db's sequences: the empirical distribution of first symbols, of
// transitions, and of stopping after each symbol. It is for evaluation
// only (it copies db's structure without any privacy): a corpus with the
// spatial structure of a small real one and a population large enough for
// user-level DP to leave signal. Person i is "m<i>".
func MarkovPopulation(db *DB, persons, seqsPerPerson int, src noise.Source) (*DB, error) {
	if persons < 1 || seqsPerPerson < 1 {
		return nil, fmt.Errorf("trajdb: markov population: want persons and sequences per person >= 1, got %d and %d", persons, seqsPerPerson)
	}
	n := db.Size
	start := make([]float64, n)
	// next[x][y] counts x→y, stop[x] the sequences ending at x.
	next := make([]map[int]float64, n)
	stop := make([]float64, n)
	seen := false
	for _, s := range db.Sequences() {
		if len(s) == 0 {
			continue
		}
		seen = true
		start[s[0]]++
		for i := 1; i < len(s); i++ {
			if next[s[i-1]] == nil {
				next[s[i-1]] = map[int]float64{}
			}
			next[s[i-1]][s[i]]++
		}
		stop[s[len(s)-1]]++
	}
	if !seen {
		return nil, errors.New("trajdb: markov population: no sequences to learn from")
	}
	// Each symbol's outcomes: the stop (-1) then its successors in a fixed
	// order, so that a seeded population is reproducible.
	type outcome struct {
		sym int
		w   float64
	}
	outs := make([][]outcome, n)
	for x := range n {
		outs[x] = append(outs[x], outcome{-1, stop[x]})
		for y := range n {
			if w := next[x][y]; w > 0 {
				outs[x] = append(outs[x], outcome{y, w})
			}
		}
	}
	pick := func(o []outcome) int {
		var tot float64
		for _, e := range o {
			tot += e.w
		}
		u := noise.Uniform(src) * tot
		for _, e := range o {
			if u < e.w {
				return e.sym
			}
			u -= e.w
		}
		return o[len(o)-1].sym
	}
	starts := make([]outcome, 0, n)
	for x, w := range start {
		if w > 0 {
			starts = append(starts, outcome{x, w})
		}
	}
	const maxSteps = 1000 // a cycle-free bound on a sampled sequence
	out := &DB{Size: n, Users: make([]User, persons)}
	for p := range persons {
		u := User{ID: "m" + strconv.Itoa(p), Seqs: make([][]int, seqsPerPerson)}
		for k := range seqsPerPerson {
			s := []int{pick(starts)}
			for len(s) < maxSteps {
				y := pick(outs[s[len(s)-1]])
				if y < 0 {
					break
				}
				s = append(s, y)
			}
			u.Seqs[k] = s
		}
		out.Users[p] = u
	}
	return out, nil
}

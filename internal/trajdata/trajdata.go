// Package trajdata generates the small synthetic trajectory databases that
// tracepriv's audits, reproductions and tests share: the audit's
// demonstration database (AuditDemo) and the commuters of the
// quasi-identifier attack (Commuters).
//
// It returns plain per-person sequences rather than a trajdb.DB so that
// trajdb's own tests can use it; a Person converts with trajdb.User(p).
package trajdata

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/tracepriv/tracepriv/noise"
)

// Person is one person's sequences, shaped like trajdb.User.
type Person struct {
	ID   string
	Seqs [][]int
}

// The demonstration database of AuditDemo: its alphabet, the contribution
// bounds it is audited under (one sequence of at most 3 symbols per
// person) and the person whose removal exposes a sequence.
const (
	AuditDemoSymbols = 4
	AuditDemoMaxLen  = 3
	AuditDemoMaxSeqs = 1
	AuditDemoVictim  = "victim"
)

// AuditDemo returns the audit's demonstration database, in the style of the
// thesis's Proposition 3.5: 40 people over AuditDemoSymbols symbols, each
// with one sequence of at most 3 symbols. AuditDemoVictim alone holds
// <3 1 2>; 23 others share its prefix <3 1> (as <3 1 0> or <3 1>), so an
// exploration tree reaches the victim's node from the data and only that
// node's own count, 1 with the victim and 0 without, decides whether the
// victim's sequence is released. The others are "p0" to "p38".
func AuditDemo() []Person {
	var ps []Person
	add := func(n int, s []int) {
		for range n {
			ps = append(ps, Person{ID: "p" + strconv.Itoa(len(ps)), Seqs: [][]int{slices.Clone(s)}})
		}
	}
	add(12, []int{3, 1, 0})
	add(11, []int{3, 1})
	add(8, []int{0, 1, 2})
	add(5, []int{1, 2, 3})
	add(3, []int{2, 3})
	return append(ps, Person{ID: AuditDemoVictim, Seqs: [][]int{{3, 1, 2}}})
}

// CommuterOptions shapes the synthetic database of Commuters.
type CommuterOptions struct {
	// Rows and Cols are the grid's size; cell r·Cols+c is row r, column c,
	// and the alphabet has Rows·Cols symbols.
	Rows, Cols int
	// Persons is the number of people, each with one path.
	Persons int
	// MaxLen is the longest path, in cells (at least 3).
	MaxLen int
}

// Commuters returns a synthetic database for attack experiments over
// opt.Rows·opt.Cols symbols: each person walks from a home cell to a work
// cell, both uniform on the grid with Manhattan distance between 2 and
// MaxLen-1, along a uniformly random shortest (monotone staircase) path, so
// paths have 3 to MaxLen cells and the same home and work can be joined by
// many paths. Person i is "p<i>".
func Commuters(opt CommuterOptions, src noise.Source) ([]Person, error) {
	if opt.Rows < 1 || opt.Cols < 1 || opt.Persons < 1 || opt.MaxLen < 3 || opt.Rows+opt.Cols < 4 {
		return nil, fmt.Errorf("commuters: need a grid with two cells 2 apart, persons >= 1 and MaxLen >= 3, got %+v", opt)
	}
	var ps []Person
	cell := func() (int, int) {
		return int(noise.Int64N(src, int64(opt.Rows))), int(noise.Int64N(src, int64(opt.Cols)))
	}
	for p := range opt.Persons {
		var hr, hc, wr, wc, dist int
		for {
			hr, hc = cell()
			wr, wc = cell()
			dist = abs(hr-wr) + abs(hc-wc)
			if dist >= 2 && dist <= opt.MaxLen-1 {
				break
			}
		}
		// A random interleaving of the row and column steps.
		steps := make([]bool, dist) // true: a row step
		for i := range abs(hr - wr) {
			steps[i] = true
		}
		for i := len(steps) - 1; i > 0; i-- {
			j := int(noise.Int64N(src, int64(i+1)))
			steps[i], steps[j] = steps[j], steps[i]
		}
		r, c := hr, hc
		path := []int{r*opt.Cols + c}
		for _, rowStep := range steps {
			if rowStep {
				r += sign(wr - hr)
			} else {
				c += sign(wc - hc)
			}
			path = append(path, r*opt.Cols+c)
		}
		ps = append(ps, Person{ID: "p" + strconv.Itoa(p), Seqs: [][]int{path}})
	}
	return ps, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

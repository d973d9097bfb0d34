package bdp

import (
	"fmt"
	"math"
)

// Joint is a distribution over databases of N records with values in
// {0, …, States−1}. P is indexed by the database read as a base-States
// number, record 0 the least significant digit.
type Joint struct {
	States, N int
	P         []float64
}

func (j Joint) size() int {
	n := 1
	for range j.N {
		n *= j.States
	}
	return n
}

// digit returns record i of database index x.
func (j Joint) digit(x, i int) int {
	for range i {
		x /= j.States
	}
	return x % j.States
}

func (j Joint) check() error {
	if j.States < 2 || j.N < 1 {
		return fmt.Errorf("bdp: joint needs at least 2 states and 1 record, got %d and %d", j.States, j.N)
	}
	if j.N > 12 || j.size() > 1<<16 {
		return fmt.Errorf("bdp: joint with %d records of %d states is too large to enumerate", j.N, j.States)
	}
	if len(j.P) != j.size() {
		return fmt.Errorf("bdp: joint has %d probabilities, want %d", len(j.P), j.size())
	}
	s := 0.0
	for x, p := range j.P {
		if math.IsNaN(p) || p < 0 {
			return fmt.Errorf("bdp: joint probability %d is %v", x, p)
		}
		s += p
	}
	if math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("bdp: joint sums to %v, not 1", s)
	}
	return nil
}

// MarkovJoint is the joint distribution of n steps of a chain with
// transition matrix p started from w.
func MarkovJoint(p [][]float64, w []float64, n int) (Joint, error) {
	if err := checkStochastic(p, 1e-9); err != nil {
		return Joint{}, err
	}
	s := len(p)
	if len(w) != s {
		return Joint{}, fmt.Errorf("bdp: initial distribution has %d states, want %d", len(w), s)
	}
	j := Joint{States: s, N: n}
	if n < 1 || n > 12 {
		return Joint{}, fmt.Errorf("bdp: chain length %d out of range [1, 12] for enumeration", n)
	}
	j.P = make([]float64, j.size())
	for x := range j.P {
		pr := w[j.digit(x, 0)]
		for i := 1; i < n; i++ {
			pr *= p[j.digit(x, i-1)][j.digit(x, i)]
		}
		j.P[x] = pr
	}
	return j, nil
}

// PerRecord builds the likelihood matrix of a mechanism that randomises each
// of n records independently with the channel q[x][y] (for example
// randomised response), over the product outputs. It returns nil if q is
// empty or ragged or n is not in [1, 12]; Leakage then reports the mismatch.
func PerRecord(q [][]float64, n int) [][]float64 {
	if len(q) == 0 || len(q[0]) == 0 || n < 1 || n > 12 {
		return nil
	}
	for _, row := range q {
		if len(row) != len(q[0]) {
			return nil
		}
	}
	s, o := len(q), len(q[0])
	in, out := 1, 1
	for range n {
		in *= s
		out *= o
	}
	lik := make([][]float64, in)
	for x := range lik {
		lik[x] = make([]float64, out)
		for y := range lik[x] {
			p, xx, yy := 1.0, x, y
			for range n {
				p *= q[xx%s][yy%o]
				xx /= s
				yy /= o
			}
			lik[x][y] = p
		}
	}
	return lik
}

// RR is the channel of binary randomised response at τ: keep the bit with
// probability e^τ/(1+e^τ). It is τ-DP per record.
func RR(tau float64) [][]float64 {
	p := 1 / (1 + math.Exp(-tau))
	return [][]float64{{p, 1 - p}, {1 - p, p}}
}

// LeakageResult is the exact BDPL and where it is attained.
type LeakageResult struct {
	BDPL   float64 // sup over targets, known sets, values and outputs
	Target int     // i
	Known  []int   // K
}

// Leakage computes the exact Bayesian privacy leakage (Def 2.26–2.27) of a
// mechanism with finite outputs, lik[x][y] = Pr[M(x) = y] over the databases
// of j, by enumerating every target i, known set K ⊆ [n]∖{i}, known values
// x_K and pair x_i, x'_i of positive probability:
//
//	BDPL = max ln Pr[y | x_K, x_i] / Pr[y | x_K, x'_i].
//
// The sup over output sets is attained at single outputs, since a ratio of
// sums is at most the largest ratio. 0/0 counts as 0 and p/0 as +Inf. The
// cost is O(n·2^{n−1}·|X|·|Y|), so it is an oracle for tiny cases.
func Leakage(j Joint, lik [][]float64) (LeakageResult, error) {
	if err := j.check(); err != nil {
		return LeakageResult{}, err
	}
	size := j.size()
	if len(lik) != size || size == 0 {
		return LeakageResult{}, fmt.Errorf("bdp: likelihood has %d rows for %d databases", len(lik), size)
	}
	ny := len(lik[0])
	for x, row := range lik {
		if len(row) != ny {
			return LeakageResult{}, fmt.Errorf("bdp: likelihood row %d has %d outputs, want %d", x, len(row), ny)
		}
	}
	best := LeakageResult{BDPL: 0, Target: -1}
	s := j.States
	_ = eachAdversary(j.records(), func(i int, known, _ []int) error {
		nk, key := j.knownKey(i, known)
		mass := make([]float64, nk*s)
		acc := make([][]float64, nk*s)
		for x, px := range j.P {
			if px == 0 {
				continue
			}
			k := key(x)
			if acc[k] == nil {
				acc[k] = make([]float64, ny)
			}
			mass[k] += px
			for y, l := range lik[x] {
				acc[k][y] += px * l
			}
		}
		for kv := range nk {
			for a := range s {
				ka := kv*s + a
				if mass[ka] == 0 {
					continue
				}
				for b := range s {
					kb := kv*s + b
					if a == b || mass[kb] == 0 {
						continue
					}
					for y := range ny {
						num, den := acc[ka][y]/mass[ka], acc[kb][y]/mass[kb]
						var r float64
						switch {
						case num == 0:
							continue
						case den == 0:
							r = math.Inf(1)
						default:
							r = math.Log(num / den)
						}
						if r > best.BDPL {
							best = LeakageResult{BDPL: r, Target: i, Known: known}
						}
					}
				}
			}
		}
		return nil
	})
	return best, nil
}

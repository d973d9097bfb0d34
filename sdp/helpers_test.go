package sdp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// maxCutSDPA returns the Goemans–Williamson relaxation of max-cut on the
// weighted graph w (symmetric, zero diagonal):
// maximise tr(L X)/4 s.t. X_ii = 1, X ⪰ 0, with L the Laplacian.
func maxCutSDPA(w [][]float64) *SDPA {
	n := len(w)
	p := &SDPA{M: n, Blocks: []int{n}, A: make([]float64, n)}
	for i := 0; i < n; i++ {
		var deg float64
		for j := 0; j < n; j++ {
			deg += w[i][j]
		}
		if deg != 0 {
			p.Entries = append(p.Entries, SDPAEntry{Mat: 0, Block: 0, I: i, J: i, V: deg / 4})
		}
		for j := i + 1; j < n; j++ {
			if w[i][j] != 0 {
				p.Entries = append(p.Entries, SDPAEntry{Mat: 0, Block: 0, I: i, J: j, V: -w[i][j] / 4})
			}
		}
		p.A[i] = 1
		p.Entries = append(p.Entries, SDPAEntry{Mat: i + 1, Block: 0, I: i, J: i, V: 1})
	}
	return p
}

// thetaSDPA returns the Lovász theta program of the graph with the given
// edges on n vertices: maximise tr(J X) s.t. tr X = 1, X_ij = 0 on edges.
func thetaSDPA(n int, edges [][2]int) *SDPA {
	p := &SDPA{M: 1 + len(edges), Blocks: []int{n}, A: make([]float64, 1+len(edges))}
	p.A[0] = 1
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			p.Entries = append(p.Entries, SDPAEntry{Mat: 0, Block: 0, I: i, J: j, V: 1})
		}
		p.Entries = append(p.Entries, SDPAEntry{Mat: 1, Block: 0, I: i, J: i, V: 1})
	}
	for k, e := range edges {
		i, j := min(e[0], e[1]), max(e[0], e[1])
		p.Entries = append(p.Entries, SDPAEntry{Mat: 2 + k, Block: 0, I: i, J: j, V: 1})
	}
	return p
}

func cycleEdges(n int) [][2]int {
	var e [][2]int
	for i := 0; i < n; i++ {
		e = append(e, [2]int{i, (i + 1) % n})
	}
	return e
}

// petersenEdges: outer 5-cycle, inner pentagram, spokes.
func petersenEdges() [][2]int {
	var e [][2]int
	for i := 0; i < 5; i++ {
		e = append(e, [2]int{i, (i + 1) % 5}, [2]int{5 + i, 5 + (i+2)%5}, [2]int{i, 5 + i})
	}
	return e
}

// randomGraph returns a weighted graph with edge probability prob and
// unit weights, from a fixed seed.
func randomGraph(n int, prob float64, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < prob {
				w[i][j], w[j][i] = 1, 1
			}
		}
	}
	return w
}

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(1, math.Abs(want))
}

func solveSDPA(t testing.TB, p *SDPA) *SDPAResult {
	t.Helper()
	r, err := SolveSDPA(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

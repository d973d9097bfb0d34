// Package disjoint is a union-find forest over the integers 0..n-1, for
// grouping things that are joined pairwise (files that share a person,
// coordinates that are correlated).
package disjoint

// Sets partitions 0..n-1 into disjoint sets.
type Sets struct{ parent []int }

// New returns n singletons.
func New(n int) *Sets {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return &Sets{parent: p}
}

// Find returns the representative of i's set, halving the path on the way.
func (s *Sets) Find(i int) int {
	for s.parent[i] != i {
		s.parent[i] = s.parent[s.parent[i]]
		i = s.parent[i]
	}
	return i
}

// Union joins the sets of i and j.
func (s *Sets) Union(i, j int) { s.parent[s.Find(i)] = s.Find(j) }

// Example 3.7 of Guerra-Balboa's thesis (Sec. 3.4.2.1, "Exponential
// Clustering", within pp. 50-53 by the thesis's table of contents; lines
// 1205-1219 of the stored text): a clustering mechanism in the style of
// Hua et al. [117] releases the centroids of a partition of the data's own
// locations, and an attacker who knows every location but the target's
// inverts the released centroid to recover the target's location exactly.

package repro

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/stats"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/viz"
)

// Example37Locations are the example's locations at one timestamp: the
// target l1 = (2, 2), and l2 = (5, 2) and l3 = (5, 5), which the attacker
// knows (thesis L1205-1209).
var Example37Locations = [3][2]float64{{2, 2}, {5, 2}, {5, 5}}

// Example37Box is the public bounding box [0, 8] x [0, 8] (minX, minY,
// maxX, maxY) of the corrected mechanism's universe and the attacker's
// prior: chosen without looking at the locations beyond their being in it,
// as a city map would be.
var Example37Box = [4]float64{0, 0, 8, 8}

// Example37Options sets up ReproduceExample37. Zero fields take the
// defaults given.
type Example37Options struct {
	// Epsilon is the privacy parameter both mechanisms claim (default 1).
	Epsilon float64
	// Draws is the number of releases per mechanism and database (default
	// 2000).
	Draws int
	// Grid is the step of the corrected mechanism's public universe, the
	// grid over Example37Box (default 1: 81 points, 3240 pairs of
	// centres).
	Grid float64
	// Radius is the distance within which a recovered location counts as
	// a hit (default 1).
	Radius float64
	// Sweep are the epsilons of the exact error curve (default 0.25 to
	// 64, doubling).
	Sweep []float64
	// Src is the randomness; nil means crypto/rand.
	Src noise.Source
}

// Example37Result is the JSON of "repro thesis --example 3.7".
type Example37Result struct {
	Version    int     `json:"version"`
	Epsilon    float64 `json:"epsilon"`
	Randomness string  `json:"randomness"`
	// Locations are l1 (the target), l2 and l3; Neighbour is D', the
	// database with the target at the far corner of the box instead
	// (bounded DP: one record replaced).
	Locations [3][2]float64 `json:"locations"`
	Neighbour [2]float64    `json:"neighbour_target"`
	Box       [4]float64    `json:"box"`
	Radius    float64       `json:"radius"`
	// PriorError is the error of the best guess without a release, the
	// box's centre (the posterior mean of the uniform prior).
	PriorError float64 `json:"prior_error"`
	// ThesisRelease is the release the thesis works through, the
	// centroids of P3 = {{l2}, {l1, l3}}, and ThesisRecovered what the
	// attack recovers from it (the thesis: (2, 2)).
	ThesisRelease   [][2]float64 `json:"thesis_release"`
	ThesisRecovered [2]float64   `json:"thesis_recovered"`
	ThesisPartition string       `json:"thesis_partition"`
	// RecoveredError is the attack's mean error (Euclidean distance to l1)
	// over the flawed mechanism's releases, RecoveredErrorCorrect over the
	// corrected mechanism's.
	RecoveredError        float64 `json:"recovered_error"`
	RecoveredErrorCorrect float64 `json:"recovered_error_correct"`
	// Flawed and Correct detail each mechanism.
	Flawed  Example37Side `json:"flawed"`
	Correct Example37Side `json:"correct"`
	// Sweep is the exact expected error of the attack against epsilon.
	Sweep []Example37SweepRow `json:"sweep"`
	// Summary states each finding in a sentence.
	Summary []string `json:"summary"`
	Files   []string `json:"files"`
}

// Example37Side is the attack against one mechanism.
type Example37Side struct {
	Mechanism   string `json:"mechanism"`
	Description string `json:"description"`
	// Outputs is the number of possible releases of D.
	Outputs int `json:"outputs"`
	Draws   int `json:"draws"`
	// MeanError and MaxError summarise the attack's error over Draws
	// releases of D; ExpectedError is its exact expectation (by
	// enumerating the releases); ExactRecoveries counts the draws that
	// recovered l1 to within 1e-9.
	MeanError       float64 `json:"mean_error"`
	MaxError        float64 `json:"max_error"`
	ExpectedError   float64 `json:"expected_error"`
	ExactRecoveries int     `json:"exact_recoveries"`
	// BayesError is the exact expected error of the strongest attacker
	// for the prior: the posterior mean of l1 given the release, l1
	// uniform on a 0.5-step grid of the box a priori (l2 and l3 known).
	// Without any release that attacker guesses the box's centre, at
	// Example37Result.PriorError.
	BayesError float64 `json:"bayes_error"`
	// HitWith is the share of releases of D from which the attack lands
	// within Radius of l1, HitWithout the share of releases of D' (target
	// elsewhere) from which it does, with Clopper-Pearson intervals (joint
	// 95 %) and their exact values. An epsilon-DP mechanism has
	// HitWith <= e^epsilon HitWithout.
	HitWith           float64    `json:"hit_with_target"`
	HitWithout        float64    `json:"hit_without_target"`
	HitWithCI         [2]float64 `json:"hit_with_target_ci"`
	HitWithoutCI      [2]float64 `json:"hit_without_target_ci"`
	ExactHitWith      float64    `json:"exact_hit_with_target"`
	ExactHitWithout   float64    `json:"exact_hit_without_target"`
	EpsilonLower      float64    `json:"epsilon_lower"`
	ExactEventLoss    float64    `json:"exact_event_loss,omitempty"`
	EventLossInfinite bool       `json:"event_loss_infinite"`
	// OutputLoss is the exact privacy loss between D and D', the largest
	// |ln P(o | D)/P(o | D')| over releases o; OutputLossInfinite is set
	// (and OutputLoss omitted) when some release of one is impossible
	// under the other.
	OutputLoss         float64 `json:"output_loss,omitempty"`
	OutputLossInfinite bool    `json:"output_loss_infinite"`
}

// Example37SweepRow is the exact expected error of the attack at one
// epsilon.
type Example37SweepRow struct {
	Epsilon float64 `json:"epsilon"`
	Flawed  float64 `json:"flawed"`
	Correct float64 `json:"correct"`
	// CorrectBayes is the Bayes attacker's against the corrected
	// mechanism (Example37Side.BayesError).
	CorrectBayes float64 `json:"correct_bayes"`
}

// example37Mechanism is a clustering mechanism with finitely many
// releases: each with its probability, given the locations.
type example37Mechanism interface {
	name() string
	describe() string
	outputs(locs [][2]float64, eps float64) ([][][2]float64, []float64)
}

// example37Hua is the flawed mechanism: Hua et al.'s [117] noisy
// clustering with m = 2 at one timestamp, as the thesis describes it. The
// exponential mechanism picks a partition of the data's own locations into
// two groups, with probability proportional to exp(eps·u/(2Δu)) for the
// claimed Δu = 1, and the centroids of its groups are released. The score
// is ours (the thesis gives its idea only, "based on the average distance
// between the trajectories whose locations are grouped together"): minus
// the mean distance of a location to its group's centroid, over the box's
// diagonal, so u lies in [-1, 0] as the paper's claim u <= 1 needs. The
// attack does not depend on it: every partition's centroids invert.
type example37Hua struct{ box [4]float64 }

func (example37Hua) name() string { return "hua-exponential-clustering" }
func (example37Hua) describe() string {
	return "exponential mechanism over the partitions of the data's own locations into 2 groups (claimed sensitivity 1), centroids released: Hua et al. [117] with m = 2"
}

func (h example37Hua) outputs(locs [][2]float64, eps float64) ([][][2]float64, []float64) {
	diag := math.Hypot(h.box[2]-h.box[0], h.box[3]-h.box[1])
	var outs [][][2]float64
	var logw []float64
	for _, p := range example37Partitions(len(locs)) {
		var cs [][2]float64
		dist := 0.0
		for _, g := range p {
			c := example37Centroid(locs, g)
			cs = append(cs, c)
			for _, i := range g {
				dist += math.Hypot(locs[i][0]-c[0], locs[i][1]-c[1])
			}
		}
		u := -dist / float64(len(locs)) / diag
		outs = append(outs, example37Sorted(cs))
		logw = append(logw, eps*u/2)
	}
	return outs, example37Normalise(logw)
}

// example37Grid is the corrected mechanism, the thesis's remedy (L1219: "a
// data-independent universe of locations ... and output a partition of
// this universe"): the exponential mechanism over pairs of centres of a
// public grid on the box (each pair is the partition of the universe into
// its two Voronoi cells), scored by minus the 2-means cost of the
// locations, clipped to the box, and released as the pair. One location
// changes the cost by at most the box's squared diagonal, whether it is
// replaced, added or removed, so Δu = diag² and the release is eps-DP;
// its range does not depend on the data (Proposition 3.6).
type example37Grid struct {
	box  [4]float64
	step float64
}

func (example37Grid) name() string { return "grid-exponential-clustering" }
func (g example37Grid) describe() string {
	return fmt.Sprintf("exponential mechanism over pairs of centres on a public %g-step grid of the box (each pair a partition of the universe), score minus the 2-means cost, sensitivity the squared diagonal", g.step)
}

func (g example37Grid) points() [][2]float64 {
	nx := int(math.Round((g.box[2] - g.box[0]) / g.step))
	ny := int(math.Round((g.box[3] - g.box[1]) / g.step))
	var pts [][2]float64
	for i := 0; i <= nx; i++ {
		for j := 0; j <= ny; j++ {
			pts = append(pts, [2]float64{g.box[0] + float64(i)*g.step, g.box[1] + float64(j)*g.step})
		}
	}
	return pts
}

func (g example37Grid) outputs(locs [][2]float64, eps float64) ([][][2]float64, []float64) {
	pts := g.points()
	var outs [][][2]float64
	for a := range pts {
		for b := a + 1; b < len(pts); b++ {
			outs = append(outs, [][2]float64{pts[a], pts[b]})
		}
	}
	return outs, g.probs(pts, locs, eps)
}

// probs returns the probabilities of the releases, the pairs of pts in the
// order outputs lists them (the same for every database: the range is
// public).
func (g example37Grid) probs(pts, locs [][2]float64, eps float64) []float64 {
	diag2 := example37Dist2([2]float64{g.box[0], g.box[1]}, [2]float64{g.box[2], g.box[3]})
	clipped := make([][2]float64, len(locs))
	for i, l := range locs {
		clipped[i] = example37Clip(l, g.box)
	}
	var logw []float64
	for a := range pts {
		for b := a + 1; b < len(pts); b++ {
			cost := 0.0
			for _, x := range clipped {
				cost += math.Min(example37Dist2(x, pts[a]), example37Dist2(x, pts[b]))
			}
			logw = append(logw, -eps*cost/(2*diag2))
		}
	}
	return example37Normalise(logw)
}

// example37Partitions lists the partitions of {0..n-1} into two non-empty
// groups, the group holding 0 first.
func example37Partitions(n int) [][2][]int {
	var out [][2][]int
	for mask := 0; mask < 1<<(n-1); mask++ {
		// Bit i-1 of mask puts location i with location 0.
		var a, b []int
		a = append(a, 0)
		for i := 1; i < n; i++ {
			if mask&(1<<(i-1)) != 0 {
				a = append(a, i)
			} else {
				b = append(b, i)
			}
		}
		if len(b) > 0 {
			out = append(out, [2][]int{a, b})
		}
	}
	return out
}

func example37Centroid(locs [][2]float64, g []int) [2]float64 {
	var c [2]float64
	for _, i := range g {
		c[0] += locs[i][0]
		c[1] += locs[i][1]
	}
	return [2]float64{c[0] / float64(len(g)), c[1] / float64(len(g))}
}

// example37Sorted orders released points so that their order says nothing
// about which group they came from.
func example37Sorted(cs [][2]float64) [][2]float64 {
	out := slices.Clone(cs)
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

func example37Dist2(a, b [2]float64) float64 {
	dx, dy := a[0]-b[0], a[1]-b[1]
	return dx*dx + dy*dy
}

func example37Clip(p [2]float64, box [4]float64) [2]float64 {
	return [2]float64{math.Min(math.Max(p[0], box[0]), box[2]), math.Min(math.Max(p[1], box[1]), box[3])}
}

// example37Normalise turns log-weights into probabilities (log-sum-exp).
func example37Normalise(logw []float64) []float64 {
	m := slices.Max(logw)
	p := make([]float64, len(logw))
	s := 0.0
	for i, w := range logw {
		p[i] = math.Exp(w - m)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// example37Partition names the partitions of the thesis: P1 = {{l1}, {l2,
// l3}}, P2 = {{l1, l2}, {l3}}, P3 = {{l2}, {l1, l3}}.
var example37PartitionNames = [3]string{"P1 = {{l1}, {l2, l3}}", "P2 = {{l1, l2}, {l3}}", "P3 = {{l2}, {l1, l3}}"}

// Example37Attack is the thesis's attack (L1209-1217): an attacker who
// knows l2 and l3 and that the mechanism releases the two centroids of a
// partition of {l1, l2, l3} knows, for each partition, one centroid in
// advance: (l2+l3)/2 for P1, l3 for P2 and l2 for P3. The partition whose
// known centroid is released is the one computed, and the other released
// centroid c inverts to l1 = c (P1), 2c - l2 (P2) or 2c - l3 (P3). Against
// a release that is not a set of data centroids it takes the partition and
// released point that match best (the least distance between the known
// centroid and a released point), the same inversion as its best guess,
// clipped to the public box. It returns the guess and the partition chosen
// (0, 1, 2 for P1, P2, P3).
func Example37Attack(release [][2]float64, l2, l3 [2]float64, box [4]float64) ([2]float64, int, error) {
	if len(release) != 2 {
		return [2]float64{}, 0, fmt.Errorf("repro: example 3.7: the attack needs a release of 2 centroids, got %d", len(release))
	}
	known := [3][2]float64{{(l2[0] + l3[0]) / 2, (l2[1] + l3[1]) / 2}, l3, l2}
	invert := func(k int, c [2]float64) [2]float64 {
		switch k {
		case 1:
			return [2]float64{2*c[0] - l2[0], 2*c[1] - l2[1]}
		case 2:
			return [2]float64{2*c[0] - l3[0], 2*c[1] - l3[1]}
		}
		return c
	}
	best, bestK, bestRes := [2]float64{}, -1, math.Inf(1)
	for k := range known {
		for i := range 2 {
			res := math.Hypot(release[i][0]-known[k][0], release[i][1]-known[k][1])
			if res < bestRes {
				best, bestK, bestRes = invert(k, release[1-i]), k, res
			}
		}
	}
	return example37Clip(best, box), bestK, nil
}

// ReproduceExample37 runs the attack of Example 3.7 against the flawed
// clustering and the corrected one, on the thesis's database D and on its
// neighbour D' (the target at the box's far corner), by sampling releases
// and by enumerating them exactly.
func ReproduceExample37(opt Example37Options) (*Example37Result, error) {
	if opt.Epsilon == 0 {
		opt.Epsilon = 1
	}
	if opt.Draws == 0 {
		opt.Draws = 2000
	}
	if opt.Grid == 0 {
		opt.Grid = 1
	}
	if opt.Radius == 0 {
		opt.Radius = 1
	}
	if opt.Sweep == nil {
		for e := 0.25; e <= 64; e *= 2 {
			opt.Sweep = append(opt.Sweep, e)
		}
	}
	switch {
	case !(opt.Epsilon > 0) || math.IsInf(opt.Epsilon, 1):
		return nil, fmt.Errorf("repro: example 3.7: epsilon must be positive and finite, got %v", opt.Epsilon)
	case opt.Draws < 1:
		return nil, fmt.Errorf("repro: example 3.7: draws must be positive, got %d", opt.Draws)
	case !(opt.Grid > 0) || opt.Grid > 8 || math.Abs(8/opt.Grid-math.Round(8/opt.Grid)) > 1e-9 || 8/opt.Grid > 40:
		return nil, fmt.Errorf("repro: example 3.7: grid step must divide the box's side 8 into at most 40 steps, got %v", opt.Grid)
	case !(opt.Radius > 0) || math.IsInf(opt.Radius, 1):
		return nil, fmt.Errorf("repro: example 3.7: radius must be positive and finite, got %v", opt.Radius)
	}
	for _, e := range opt.Sweep {
		if !(e > 0) || math.IsInf(e, 1) {
			return nil, fmt.Errorf("repro: example 3.7: sweep epsilon must be positive and finite, got %v", e)
		}
	}
	box := Example37Box
	l := Example37Locations
	res := &Example37Result{
		Version: 1, Epsilon: opt.Epsilon, Randomness: randomness(opt.Src),
		Locations: l, Neighbour: [2]float64{box[2], box[3]}, Box: box, Radius: opt.Radius,
		PriorError: math.Hypot((box[0]+box[2])/2-l[0][0], (box[1]+box[3])/2-l[0][1]),
	}
	// The thesis's worked release.
	p3 := [][2]float64{l[1], example37Centroid(l[:], []int{0, 2})}
	res.ThesisRelease = example37Sorted(p3)
	g, k, err := Example37Attack(res.ThesisRelease, l[1], l[2], box)
	if err != nil {
		return nil, err
	}
	res.ThesisRecovered, res.ThesisPartition = g, example37PartitionNames[k]
	res.Summary = append(res.Summary, fmt.Sprintf("the thesis's release %v identifies %s and recovers l1 = %v (l1 is %v)",
		res.ThesisRelease, res.ThesisPartition, g, l[0]))

	d := l[:]
	dp := [][2]float64{res.Neighbour, l[1], l[2]}
	mechs := []example37Mechanism{example37Hua{box}, example37Grid{box, opt.Grid}}
	for i, m := range mechs {
		side, err := example37Measure(m, d, dp, opt, noise.Derive(opt.Src, "ex3.7/"+m.name()))
		if err != nil {
			return nil, err
		}
		if i == 0 {
			res.Flawed, res.RecoveredError = side, side.MeanError
		} else {
			res.Correct, res.RecoveredErrorCorrect = side, side.MeanError
		}
		loss := "infinite (a release of D is impossible under D')"
		if !side.OutputLossInfinite {
			loss = fmt.Sprintf("%.3g", side.OutputLoss)
		}
		res.Summary = append(res.Summary, fmt.Sprintf(
			"%s at epsilon %g: the attack's mean error %.3g over %d releases (exact %.3g; l1 recovered exactly in %d); within %g of l1 in %.1f%% of releases with the target and %.1f%% without; the Bayes attacker's error %.3g (%.3g without a release); exact privacy loss between D and D' %s",
			m.name(), opt.Epsilon, side.MeanError, side.Draws, side.ExpectedError, side.ExactRecoveries, opt.Radius,
			100*side.HitWith, 100*side.HitWithout, side.BayesError, res.PriorError, loss))
	}
	for _, e := range opt.Sweep {
		row := Example37SweepRow{Epsilon: e}
		for i, m := range mechs {
			outs, probs := m.outputs(d, e)
			v, err := example37Expected(outs, probs, l, box)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				row.Flawed = v
			} else {
				row.Correct = v
				row.CorrectBayes = example37Bayes(m, d, e, box)
			}
		}
		res.Sweep = append(res.Sweep, row)
	}
	return res, nil
}

// example37Expected is the attack's exact expected error.
func example37Expected(outs [][][2]float64, probs []float64, l [3][2]float64, box [4]float64) (float64, error) {
	e := 0.0
	for i, o := range outs {
		g, _, err := Example37Attack(o, l[1], l[2], box)
		if err != nil {
			return 0, err
		}
		e += probs[i] * math.Hypot(g[0]-l[0][0], g[1]-l[0][1])
	}
	return e, nil
}

// example37Bayes is the exact expected error of the posterior-mean
// attacker against m's releases of d (the target first) at eps, for l1
// uniform a priori on the 0.5-step grid of the box.
func example37Bayes(m example37Mechanism, d [][2]float64, eps float64, box [4]float64) float64 {
	key := func(o [][2]float64) [4]float64 { return [4]float64{o[0][0], o[0][1], o[1][0], o[1][1]} }
	outs, probs := m.outputs(d, eps)
	idx := make(map[[4]float64]int, len(outs))
	for i, o := range outs {
		idx[key(o)] = i
	}
	// Posterior numerators and denominators of the releases of d.
	sx, sy, z := make([]float64, len(outs)), make([]float64, len(outs)), make([]float64, len(outs))
	grid, fixed := m.(example37Grid)
	pts := grid.points()
	for x := box[0]; x <= box[2]; x += 0.5 {
		for y := box[1]; y <= box[3]; y += 0.5 {
			l := [][2]float64{{x, y}, d[1], d[2]}
			if fixed {
				// The same releases in the same order: no lookup.
				for i, p := range grid.probs(pts, l, eps) {
					sx[i] += p * x
					sy[i] += p * y
					z[i] += p
				}
				continue
			}
			o2, p2 := m.outputs(l, eps)
			for k, o := range o2 {
				if i, ok := idx[key(o)]; ok {
					sx[i] += p2[k] * x
					sy[i] += p2[k] * y
					z[i] += p2[k]
				}
			}
		}
	}
	e := 0.0
	for i := range outs {
		// z[i] > 0: the grid holds l1, which can release outs[i].
		e += probs[i] * math.Hypot(sx[i]/z[i]-d[0][0], sy[i]/z[i]-d[0][1])
	}
	return e
}

// example37Measure attacks m's releases of d (the target first) and of its
// neighbour dp, by sampling and exactly.
func example37Measure(m example37Mechanism, d, dp [][2]float64, opt Example37Options, src noise.Source) (Example37Side, error) {
	l1, l2, l3 := d[0], d[1], d[2]
	side := Example37Side{Mechanism: m.name(), Description: m.describe(), Draws: opt.Draws}
	outs, probs := m.outputs(d, opt.Epsilon)
	outsN, probsN := m.outputs(dp, opt.Epsilon)
	side.Outputs = len(outs)
	side.BayesError = example37Bayes(m, d, opt.Epsilon, Example37Box)
	errOf := func(o [][2]float64) (float64, error) {
		g, _, err := Example37Attack(o, l2, l3, Example37Box)
		return math.Hypot(g[0]-l1[0], g[1]-l1[1]), err
	}
	// Exact: the expected error, the hit probabilities and the largest
	// output ratio.
	exact := func(outs [][][2]float64, probs []float64) (law map[[4]float64]float64, errMean, hit float64, err error) {
		law = map[[4]float64]float64{}
		for i, o := range outs {
			law[[4]float64{o[0][0], o[0][1], o[1][0], o[1][1]}] += probs[i]
			e, err := errOf(o)
			if err != nil {
				return nil, 0, 0, err
			}
			errMean += probs[i] * e
			if e <= opt.Radius {
				hit += probs[i]
			}
		}
		return law, errMean, hit, nil
	}
	pN, _, hitN, err := exact(outsN, probsN)
	if err != nil {
		return side, err
	}
	pD, errD, hitD, err := exact(outs, probs)
	if err != nil {
		return side, err
	}
	side.ExpectedError, side.ExactHitWith, side.ExactHitWithout = errD, hitD, hitN
	for k, p := range pD {
		q := pN[k]
		if p > 0 && q == 0 {
			side.OutputLossInfinite = true
			continue
		}
		side.OutputLoss = math.Max(side.OutputLoss, math.Abs(math.Log(p/q)))
	}
	for k, q := range pN {
		if q > 0 && pD[k] == 0 {
			side.OutputLossInfinite = true
		}
	}
	if side.OutputLossInfinite {
		side.OutputLoss = 0
	}
	switch {
	case side.ExactHitWith > 0 && side.ExactHitWithout == 0:
		side.EventLossInfinite = true
	case side.ExactHitWith > 0:
		side.ExactEventLoss = math.Log(side.ExactHitWith / side.ExactHitWithout)
	}
	// Sampled: the attack as it would run.
	cumulative := func(p []float64) []float64 {
		c, acc := make([]float64, len(p)), 0.0
		for i, v := range p {
			acc += v
			c[i] = acc
		}
		return c
	}
	cum, cumN := cumulative(probs), cumulative(probsN)
	pick := func(c []float64) int {
		u := noise.Uniform(src) * c[len(c)-1]
		return min(sort.SearchFloat64s(c, u), len(c)-1)
	}
	hits, hitsN, sum := 0, 0, 0.0
	for range opt.Draws {
		e, err := errOf(outs[pick(cum)])
		if err != nil {
			return side, err
		}
		sum += e
		side.MaxError = math.Max(side.MaxError, e)
		if e < 1e-9 {
			side.ExactRecoveries++
		}
		if e <= opt.Radius {
			hits++
		}
		eN, err := errOf(outsN[pick(cumN)])
		if err != nil {
			return side, err
		}
		if eN <= opt.Radius {
			hitsN++
		}
	}
	n := float64(opt.Draws)
	side.MeanError = sum / n
	side.HitWith, side.HitWithout = float64(hits)/n, float64(hitsN)/n
	level := 1 - 0.05/2
	side.HitWithCI[0], side.HitWithCI[1] = stats.ClopperPearson(hits, opt.Draws, level)
	side.HitWithoutCI[0], side.HitWithoutCI[1] = stats.ClopperPearson(hitsN, opt.Draws, level)
	side.EpsilonLower = lossLower(side.HitWithCI[0], side.HitWithoutCI[1])
	return side, nil
}

// WriteExample37 draws the exact expected error of the attack against
// epsilon for both mechanisms (ex3_7, SVG and PNG) and writes
// results-ex3_7.json to dir, recording the paths in res.Files.
func WriteExample37(dir string, res *Example37Result) error {
	if res == nil || len(res.Sweep) == 0 {
		return errors.New("repro: example 3.7: nothing to write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	flawed := xyOf(res.Sweep, func(r Example37SweepRow) float64 { return r.Epsilon }, func(r Example37SweepRow) float64 { return r.Flawed })
	correct := xyOf(res.Sweep, func(r Example37SweepRow) float64 { return r.Epsilon }, func(r Example37SweepRow) float64 { return r.Correct })
	p, err := viz.Chart([]viz.Line{
		{Label: "flawed: centroids of the data's own partition (Hua et al.)", XY: flawed, Points: true},
		{Label: "corrected: pair of centres of a public grid", XY: correct, Points: true},
		{Label: "corrected, the Bayes attacker (posterior mean)", XY: xyOf(res.Sweep, func(r Example37SweepRow) float64 { return r.Epsilon }, func(r Example37SweepRow) float64 { return r.CorrectBayes }), Points: true, Dashed: true},
		{Label: "no release: the box's centre", XY: xyOf(res.Sweep, func(r Example37SweepRow) float64 { return r.Epsilon }, func(Example37SweepRow) float64 { return res.PriorError }), Dashed: true},
	}, viz.ChartOptions{
		Title:  "Thesis Example 3.7: the attacker inverts the released centroid",
		XLabel: "epsilon claimed", YLabel: "expected distance of the recovered l1 to l1", LogX: true, LegendAuto: true,
	})
	if err != nil {
		return err
	}
	files, err := saveFigure(p, filepath.Join(dir, "ex3_7"), 0, 0)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "results-ex3_7.json")
	res.Files = append(files, path)
	return atomicfile.WriteJSON(path, res)
}

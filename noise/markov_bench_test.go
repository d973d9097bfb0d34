package noise

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

var (
	envOnce sync.Once
	envKs   []gp.Kernel
	envErr  error
)

// envelopeComponents returns the noise kernel of the bundled prior's
// family, as `tracepriv cip envelope --prior internal/sample/prior.json`
// prints it: four Matérn-7/2 components, weights per unit of noise
// variance.
func envelopeComponents(b *testing.B) []gp.Kernel {
	envOnce.Do(func() {
		p, err := prior.ReadFile("../internal/sample/prior.json")
		if err != nil {
			envErr = err
			return
		}
		env, err := cip.NewEnvelope(p.Families(), nil)
		if err != nil {
			envErr = err
			return
		}
		envKs = env.Components
	})
	if envErr != nil {
		b.Fatal(envErr)
	}
	return envKs
}

// benchTrace returns n timestamps at irregular 1-5 s sampling, whole
// seconds (GPS-like: five distinct steps) or milliseconds (about 4,000),
// and a smooth east/north path in metres.
func benchTrace(n int, ms bool) (ts []float64, x [][]float64) {
	src := Seeded(1)
	ts = make([]float64, n)
	x = [][]float64{make([]float64, n), make([]float64, n)}
	for i := range n {
		if i > 0 {
			if ms {
				ts[i] = ts[i-1] + float64(1000+Int64N(src, 4001))/1000
			} else {
				ts[i] = ts[i-1] + float64(1+Int64N(src, 5))
			}
		}
		x[0][i] = 5000*math.Sin(ts[i]/3000) + 0.123456789
		x[1][i] = 3000*math.Cos(ts[i]/4000) - 0.987654321
	}
	return ts, x
}

// BenchmarkMarkovRelease times the exact linear-time release of a 2-D trace
// (east and north) under the bundled prior's four-component Matérn-7/2
// envelope noise (alpha = 2e4 m², the scale of an epsilon-1 design), grid
// 2^-10 m, crypto/rand key, GOMAXPROCS workers: one op is one whole
// release, including the rigorous transitions of the distinct steps. It
// reports the white-noise correction η relative to the noise variance
// (from N alone, or with the timestamps known in advance, eta=times),
// the coordinates refined, the distinct steps, and the peak heap in use
// (sampled after the release: the release keeps O(n) ids and O(n/256)
// checkpoints; inputs and outputs are the caller's).
func BenchmarkMarkovRelease(b *testing.B) {
	ks := envelopeComponents(b)
	comps := stateComps(b, ks...)
	total := 0.0
	for _, m := range comps {
		total += m.MarginalVariance()
	}
	const alpha = 2e4
	for _, c := range []struct {
		n     int
		ms    bool
		times bool
	}{{1e4, false, false}, {1e5, false, false}, {1e6, false, false}, {1e6, false, true}, {1e5, true, false}, {1e6, true, false}} {
		gaps := "1s"
		if c.ms {
			gaps = "1ms"
		}
		eta := "N"
		if c.times {
			eta = "times"
		}
		b.Run(fmt.Sprintf("n=%d/gaps=%s/eta=%s", c.n, gaps, eta), func(b *testing.B) {
			ts, x := benchTrace(c.n, c.ms)
			dst := [][]float64{make([]float64, c.n), make([]float64, c.n)}
			var last *MarkovRelease
			var heap uint64
			b.ReportAllocs()
			for b.Loop() {
				opt := MarkovOptions{N: c.n, Dims: 2, Grid: 0x1p-10}
				if c.times {
					opt.Times = ts
				}
				r, err := NewMarkovRelease(comps, alpha, opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Release(dst, x, ts); err != nil {
					b.Fatal(err)
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = max(heap, ms.HeapInuse)
				last = r
			}
			b.ReportMetric(last.Eta()/(alpha*total)*1e12, "eta/var(1e-12)")
			b.ReportMetric(float64(last.Refined()), "refined")
			b.ReportMetric(float64(last.DistinctSteps()), "steps")
			b.ReportMetric(float64(heap)/(1<<20), "heapMB")
		})
	}
}

// BenchmarkDenseRelease is the dense sampler sanitize uses today, on the
// same kernel, trace and grid: Gram matrix, certified Cholesky factor
// (O(n³)) and two AddOnGrid releases, side by side with
// BenchmarkMarkovRelease at n = 1,000 and 3,000 (and the linear one at
// the same sizes).
func BenchmarkDenseRelease(b *testing.B) {
	ks := envelopeComponents(b)
	const alpha = 2e4
	comps := stateComps(b, ks...)
	for _, n := range []int{1000, 3000} {
		ts, x := benchTrace(n, false)
		b.Run(fmt.Sprintf("dense/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cov := sumGram(alpha, ts, ks...)
				mn, err := NewMultiNormalCholesky(cov)
				if err != nil {
					b.Fatal(err)
				}
				for d := range 2 {
					if _, err := mn.AddOnGrid(nil, x[d], 0x1p-10, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("linear/n=%d", n), func(b *testing.B) {
			dst := [][]float64{make([]float64, n), make([]float64, n)}
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewMarkovRelease(comps, alpha, MarkovOptions{N: n, Dims: 2, Grid: 0x1p-10})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Release(dst, x, ts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

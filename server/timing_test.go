package server

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// timingPairs is how many pairs of wrong-token requests (an existing id, an unknown one) the
// timing test sends per comparison before it first looks at its control (then more, half as
// many at a time, up to 4 times as many); each pair in random order, so that a busy machine
// slows both alike.
// TRACEPRIV_TIMING_PAIRS sets more, for a measurement (BENCHMARKS.md, issue 32 item 7).
func timingPairs() int {
	if n, err := strconv.Atoi(os.Getenv("TRACEPRIV_TIMING_PAIRS")); err == nil && n > 0 {
		return n
	}
	return 1200
}

// timingZ is the sign test's threshold: |z| beyond it says the two kinds of request take
// different times. 4.5 is a two-sided p of 7e-6, generous on a busy machine; before the lookup
// was made uniform, 1,200 pairs gave z from 9.4 to 11.4 on both stores (a median difference of
// 3.9 to 4.5 µs).
const timingZ = 4.5

// timingFloorµ is the smallest median difference the test calls a leak. A sign test over
// enough pairs finds any difference at all, and on a busy machine the request that follows
// another in a pair is not quite a fair coin. Before the credentials table, fetching a found
// row from the table after the index took 0.3 to 1.6 µs more for an existing person over
// 12,000 pairs (once 4.1 µs, z 4.76, on PostgreSQL in a loaded suite); now every id fetches
// one row (store.Credential), and what the database does for each is counted, not timed, by
// store's TestCredentialSameWork. 2 µs is
// far below the 25 to 32 µs that issue 32 measured and what a client over a network resolves.
const timingFloorµ = 2.0

// timingResult is the comparison of the latencies of wrong-token requests to an existing and
// to an unknown person, sent in interleaved pairs.
type timingResult struct {
	n        int     // pairs
	fast     bool    // the fast half of the pairs only (timingSample.result)
	slower   int     // pairs where the existing person's request took longer
	z        float64 // sign test: (slower − n/2) / √(n/4)
	medDiffµ float64 // median of the pair differences, existing − unknown, in µs
	medµ     float64 // median latency of all the requests, in µs
}

func (r timingResult) String() string {
	half := ""
	if r.fast {
		half = " (the fast half)"
	}
	return fmt.Sprintf("%d pairs%s: the existing id slower in %d (sign test z = %.2f), median difference %+.1f µs of %.0f µs",
		r.n, half, r.slower, r.z, r.medDiffµ, r.medµ)
}

// timingTarget is one comparison the timing test makes: wrong-token requests to an existing
// id and to an unknown one of the same length, at base (the server, or the control's leaky
// front).
type timingTarget struct {
	base, method      string
	path              func(id string) string
	existing, unknown string
}

// timingSample holds the pairs of one target.
type timingSample struct {
	diffs  []float64 // existing − unknown, µs, one per pair
	all    []float64 // every request's latency, µs
	slower int       // pairs where the existing id's request took longer
}

func (s *timingSample) add(de, du time.Duration) {
	s.diffs = append(s.diffs, float64(de-du)/1e3)
	s.all = append(s.all, float64(de)/1e3, float64(du)/1e3)
	if de > du {
		s.slower++
	}
}

// result is the sign test and the median difference over the pairs so far: all of them
// (fast false), or the fast half (fast true), the pairs whose slower request took at most the
// median of the pairs' slower requests.
//
// The fast half: on a busy machine a pair whose request was preempted, or waited behind another
// process, carries no sign of a leak of a few µs, only the coin of which request was hit; such
// pairs are the slow ones. The cut depends on each pair's slower latency alone, not on which id
// was the slower, so under the hypothesis of no leak each kept pair's sign is still a fair coin.
// Under load (two niced yes beside the suite's other tests) the fast half's z was about twice
// the full z for the planted leak (PostgreSQL locate: 4.9 against 3.2 at 1,800 pairs), and in a
// quiet run a little larger (22 against 18). The full set is judged as before too: the fast
// half adds a check and removes none.
func (s *timingSample) result(fast bool) timingResult {
	diffs, all := s.diffs, s.all
	slower := s.slower
	if fast {
		maxes := make([]float64, len(s.diffs))
		for i := range s.diffs {
			maxes[i] = max(s.all[2*i], s.all[2*i+1])
		}
		sorted := slices.Clone(maxes)
		slices.Sort(sorted)
		cut := sorted[(len(sorted)-1)/2]
		diffs, all, slower = nil, nil, 0
		for i, m := range maxes {
			if m > cut {
				continue
			}
			diffs = append(diffs, s.diffs[i])
			all = append(all, s.all[2*i], s.all[2*i+1])
			if s.diffs[i] > 0 {
				slower++
			}
		}
	}
	n := len(diffs)
	diffs, all = slices.Clone(diffs), slices.Clone(all)
	slices.Sort(diffs)
	slices.Sort(all)
	return timingResult{
		n: n, slower: slower, fast: fast,
		z:        (float64(slower) - float64(n)/2) / math.Sqrt(float64(n)/4),
		medDiffµ: diffs[n/2],
		medµ:     all[n],
	}
}

// leak reports whether r shows a leak in the direction dir (+1: the existing id slower;
// 0: either way): a significant sign test and a median difference over timingFloorµ.
func (r timingResult) leak(dir int) bool {
	if dir > 0 {
		return r.z >= timingZ && r.medDiffµ > timingFloorµ
	}
	return math.Abs(r.z) > timingZ && math.Abs(r.medDiffµ) > timingFloorµ
}

// timingRounds measures targets in interleaved rounds, adding to samples (one per target):
// each round sends one pair per target, the targets in random order and each pair's two
// requests in random order. Under the hypothesis that the two ids take the same time, which
// request of a pair takes longer is then a fair coin, however busy the machine is, and the
// control and the server are measured under the same load. The sign, not the size, of each
// difference: a busy machine's latencies have heavy tails, in which a rank or mean test loses
// a leak of a few µs (Wilcoxon's signed-rank test missed the 4 µs leak that the sign test
// found with z from 6 to 10 in the same number of pairs).
func timingRounds(t *testing.T, client *http.Client, rng *rand.Rand, targets []timingTarget, samples []timingSample, rounds int) {
	t.Helper()
	send := func(tg timingTarget, id string) time.Duration {
		req, err := http.NewRequest(tg.method, tg.base+tg.path(id), strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tpk_not-the-token-of-anyone-AAAAAAAAAAAAAAAAAAAAAA")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "timing-test-key-0123456789abcdef")
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		d := time.Since(start)
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("%s %s with a wrong token: %d, want 403", tg.method, tg.path(id), res.StatusCode)
		}
		return d
	}
	order := make([]int, len(targets))
	for range rounds {
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			tg := targets[i]
			var de, du time.Duration
			if rng.IntN(2) == 0 {
				de = send(tg, tg.existing)
				du = send(tg, tg.unknown)
			} else {
				du = send(tg, tg.unknown)
				de = send(tg, tg.existing)
			}
			samples[i].add(de, du)
		}
	}
}

// plantedLeak is the control's leak: about the 4 µs left before the fix (and a sixth of what
// issue 32 measured).
const plantedLeak = 5 * time.Microsecond

// spin busy-waits for d: a planted leak, the work a lookup does only for an existing person.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestPersonLookupConstantTime: with a wrong token, a request to an existing person and one to
// an unknown person take the same time (ledger and locate, on each store), judged by a sign
// test over interleaved pairs and the median of their differences, over all the pairs and over
// their fast half (a leak is both significant and over timingFloorµ in either). The test checks
// in the same rounds that it can see a leak on this machine now: the same measurement through a
// front that spends plantedLeak more on the existing person must be detected; the rounds go on
// (up to 4 times timingPairs) until it is, or the test skips, saying the machine is too busy to
// judge.
func TestPersonLookupConstantTime(t *testing.T) {
	if testing.Short() {
		t.Skip("timing measurement: not in -short")
	}
	forEachStoreInTurn(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil)
		// Two unknown ids: alicf sorts after every person (its lookup reads the credentials'
		// end row), alicd before alice (its lookup reads alice's row).
		const existing = "alice"
		unknowns := []string{"alicf", "alicd"}
		e.createPerson(map[string]any{"id": existing, "epsilon_budget": 0.1})
		for _, ep := range []struct {
			name, method string
			path         func(id string) string
		}{
			{"ledger", "GET", func(id string) string { return "/v1/people/" + id + "/ledger" }},
			{"locate", "POST", func(id string) string { return "/v1/people/" + id + "/locate" }},
		} {
			t.Run(ep.name, func(t *testing.T) {
				// The control: a planted leak the size of the one before the fix must show.
				leaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.Contains(r.URL.Path, "/"+existing+"/") {
						spin(plantedLeak)
					}
					e.srv.Handler().ServeHTTP(w, r)
				}))
				defer leaky.Close()
				// The control and the server's two comparisons in the same rounds; on a busy
				// machine the rounds go on, up to 4 times as many, until the control sees its
				// leak. When to stop depends on the control's pairs alone, whose signs are
				// independent of the server's (each pair's order is its own coin), so the
				// server's sign test at that point keeps its level.
				targets := []timingTarget{{leaky.URL, ep.method, ep.path, existing, unknowns[0]}}
				for _, u := range unknowns {
					targets = append(targets, timingTarget{e.ts.URL, ep.method, ep.path, existing, u})
				}
				rng := rand.New(rand.NewPCG(1, 2))
				// Warm up every path (connections, caches, the configuration cache).
				timingRounds(t, e.client, rng, targets, make([]timingSample, len(targets)), 50)
				samples := make([]timingSample, len(targets))
				step, limit := timingPairs()/2, 4*timingPairs()
				for n := timingPairs(); ; n += step {
					timingRounds(t, e.client, rng, targets, samples, n-len(samples[0].diffs))
					all, fast := samples[0].result(false), samples[0].result(true)
					t.Logf("control, a planted %v leak: %v; %v", plantedLeak, all, fast)
					if all.leak(1) || fast.leak(1) {
						break
					}
					if n >= limit {
						t.Skipf("this machine is too busy now to see a %v leak in %d pairs (%v; %v): cannot judge", plantedLeak, n, all, fast)
					}
				}
				for i, tg := range targets[1:] {
					for _, fast := range []bool{false, true} {
						r := samples[1+i].result(fast)
						t.Logf("the server, %s against %s: %v", existing, tg.unknown, r)
						if r.leak(0) {
							t.Errorf("a wrong token takes a different time for an existing person (%s) and an unknown one (%s): %v", existing, tg.unknown, r)
						}
					}
				}
			})
		}
	})
}

// TestAuthSameSteps: a wrong token for an existing person, for an unknown one and for a
// malformed id makes authentication take the same steps, in the same order: one SHA-256 of
// the token, one credential statement, one comparison, and no read of the person; the right
// token reads the person after that (the probe's control: it sees a lookup when there is one).
func TestAuthSameSteps(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, d Dialect) {
		e := newEnv(t, d, nil).on(t)
		tok := e.createPerson(map[string]any{"id": "alice", "epsilon_budget": 0.1})
		var mu sync.Mutex
		var steps []string
		e.srv.authProbe = func(s string) { mu.Lock(); steps = append(steps, s); mu.Unlock() }
		run := func(method, path, token string) []string {
			mu.Lock()
			steps = nil
			mu.Unlock()
			e.do(method, path, token, map[string]any{}, map[string]string{"Idempotency-Key": newKey()})
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), steps...)
		}
		wrong := "tpk_not-the-token-of-anyone-AAAAAAAAAAAAAAAAAAAAAA"
		for _, ep := range []struct{ method, op string }{{"GET", "ledger"}, {"POST", "locate"}, {"POST", "sanitize"}} {
			want := run(ep.method, "/v1/people/alice/"+ep.op, wrong)
			n := map[string]int{}
			for _, s := range want {
				n[s]++
			}
			if n["hash"] != 1 || n["credential"] != 1 || n["compare"] != 1 || n["deny"] != 1 || n["lookup"] != 0 {
				t.Errorf("%s with a wrong token took the steps %v: want one hash, credential, compare and deny, no lookup", ep.op, want)
			}
			for _, id := range []string{"alicf", "nobody-at-all-here", "%3Cb%3E"} {
				if got := run(ep.method, "/v1/people/"+id+"/"+ep.op, wrong); !slices.Equal(got, want) {
					t.Errorf("%s of %s with a wrong token took the steps %v; for an existing person, %v", ep.op, id, got, want)
				}
			}
			if got := run(ep.method, "/v1/people/alice/"+ep.op, tok); !slices.Contains(got, "lookup") || slices.Contains(got, "deny") {
				t.Errorf("%s with the right token took the steps %v: want a lookup and no deny", ep.op, got)
			}
		}
	})
}

package bdp

// eachAdversary calls f for every Bayesian adversary of Def 2.26 among
// records: each target in records and each set known of the other records
// the adversary knows, with unknown the rest, in bit-mask order over the
// others. The exact leakages (Leakage, LeakageLaplace, CovarianceFactor)
// are maxima over exactly these adversaries, so they share one
// enumeration. known and unknown are fresh slices f may keep. The first
// error f returns stops the enumeration and is returned.
func eachAdversary(records []int, f func(target int, known, unknown []int) error) error {
	for ti, target := range records {
		others := make([]int, 0, len(records)-1)
		for k, v := range records {
			if k != ti {
				others = append(others, v)
			}
		}
		for mask := 0; mask < 1<<len(others); mask++ {
			var known, unknown []int
			for b, v := range others {
				if mask>>b&1 == 1 {
					known = append(known, v)
				} else {
					unknown = append(unknown, v)
				}
			}
			if err := f(target, known, unknown); err != nil {
				return err
			}
		}
	}
	return nil
}

// records returns the records 0, …, N−1 of j.
func (j Joint) records() []int {
	r := make([]int, j.N)
	for i := range r {
		r[i] = i
	}
	return r
}

// knownKey returns how an adversary who knows the records known groups the
// databases when targeting record i: nk = States^|known| combinations of
// known values, and key(x) = (x_known read as a base-States number)·States
// + x_i, in [0, nk·States).
func (j Joint) knownKey(i int, known []int) (nk int, key func(x int) int) {
	s := j.States
	nk = 1
	for range known {
		nk *= s
	}
	return nk, func(x int) int {
		kv := 0
		for b := len(known) - 1; b >= 0; b-- {
			kv = kv*s + j.digit(x, known[b])
		}
		return kv*s + j.digit(x, i)
	}
}

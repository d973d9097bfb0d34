package noise

import (
	"math"
	"math/rand/v2"
)

// binomialAcceptBound is M in the rejection step of symmetricBinomial: the
// acceptance probability P(m)/(M·q(m)) must not exceed 1. With proposal
// q(m) = 2^-j/(4s) on the j-th step block (|m| >= j·s) and the Lemma 7
// approximation P(m) <= √(2/π)/√n · e^{-2m²/n}, the ratio is at most
// √(2/π)·4(s/√n)·2^j·e^{-2j²s²/n} <= (8/√π)(1+2^-55) ≈ 4.514, because
// s/√n <= √2 + 1.5/√n and s²/n >= 2 make 2^j e^{-4j²} <= 1. M = 5 is a valid
// bound (Google uses 16, which is also valid but rejects more often);
// TestBinomialAcceptanceBound checks it numerically.
const binomialAcceptBound = 5

// maxBinomialBlock is the largest proposal block index j worth trying:
// beyond it |m| >= j·s > √n·√(ln √n / 2) and P(m) = 0, so it is rejected
// without arithmetic that could overflow int64.
const maxBinomialBlock = 8

// symmetricBinomial returns m such that m + n/2 is (approximately, per Lemma
// 7 of Google's secure-noise note) Binomial(n, 1/2), n = sqrtN², for sqrtN in
// (2^56, 2^57]. It is Bringmann et al.'s (ICALP 2014) rejection sampler: a
// two-sided geometric choice of a block of width s ≈ √2·√n, a uniform point
// in the block, and acceptance with probability P(m)/(M q(m)).
func symmetricBinomial(src Source, sqrtN float64) int64 {
	r := rand.New(src)
	bp := newBinomialProb(sqrtN)
	s := int64(math.Round(math.Sqrt2*sqrtN + 1))
	for {
		j := int64(fairGeometric(src) - 1) // P(j) = 2^-(j+1)
		if j > maxBinomialBlock {
			continue
		}
		k := j
		if Bool(src) {
			k = -j - 1
		}
		m := s*k + r.Int64N(s)
		p := bp.at(m)
		if p > 0 && Uniform(src) < p*float64(4*s)*math.Ldexp(1, int(j))/binomialAcceptBound {
			return m
		}
	}
}

// binomialProb approximates P(B = m + n/2) for B ~ Binomial(n, 1/2),
// n = sqrtN² (Lemma 7 of Google's Secure_Noise_Generation note): the normal
// density √(2/π)/√n·e^{-2m²/n}, shrunk by 1 - 0.4·2^1.5·ln(√n)^1.5/√n to
// cover the approximation error, and 0 beyond |m| > √n·√(ln √n / 2) where
// the note truncates. The constants depend on √n only and are computed once
// per draw.
type binomialProb struct {
	sqrtN, cutoff, scale float64
}

func newBinomialProb(sqrtN float64) binomialProb {
	ln := math.Log(sqrtN)
	shrink := 1 - 0.4*math.Pow(2, 1.5)*ln*math.Sqrt(ln)/sqrtN
	return binomialProb{
		sqrtN:  sqrtN,
		cutoff: sqrtN * math.Sqrt(ln/2),
		scale:  math.Sqrt(2/math.Pi) / sqrtN * shrink,
	}
}

func (b binomialProb) at(m int64) float64 {
	fm := float64(m)
	if math.Abs(fm) > b.cutoff {
		return 0
	}
	x := fm / b.sqrtN
	return b.scale * math.Exp(-2*x*x)
}

// binomialProbability is binomialProb for a single evaluation.
func binomialProbability(sqrtN float64, m int64) float64 {
	return newBinomialProb(sqrtN).at(m)
}

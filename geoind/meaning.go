package geoind

import (
	"fmt"

	"github.com/tracepriv/tracepriv/accountant"
)

// MeaningDistancesM are the distances at which Meaning translates ε per
// metre: a street (100 m) and a neighbourhood (1 km).
var MeaningDistancesM = [2]float64{100, 1000}

// GuessAt returns the best accuracy of a guess between two places d metres
// apart, equally likely beforehand, from whatever an ε·d-private release
// shows: e^{εd}/(1 + e^{εd}) (accountant.PureBestGuess of ε·d).
func GuessAt(epsPerMetre, d float64) float64 {
	return accountant.PureBestGuess(epsPerMetre * d)
}

// Meaning renders what a budget of epsPerMetre ε per metre means to a
// person: for every query of the session (or of a person's whole release),
// the best guess between two places 100 m and 1 km apart. The commands print
// it beside every ε per metre they show.
func Meaning(epsPerMetre float64) string {
	if !(epsPerMetre > 0) {
		return "no guarantee (ε per metre is not positive)"
	}
	a, b := MeaningDistancesM[0], MeaningDistancesM[1]
	return fmt.Sprintf("ε %.4g per metre: the best guess, from the releases, of which of two places %g m apart the person was at (equally likely beforehand) is right %s; %g km apart, %s (50 %% is a coin toss; e^εd/(1+e^εd))",
		epsPerMetre, a, accountant.GuessRate(GuessAt(epsPerMetre, a)), b/1000, accountant.GuessRate(GuessAt(epsPerMetre, b)))
}

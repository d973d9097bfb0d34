package trajdb

import (
	"fmt"

	"github.com/tracepriv/tracepriv/accountant"
)

// Meaning renders what a release's user-level ε-DP means to a person: the
// best guess, from the released database, between two inputs that differ in
// all of one person's trajectories (whether they are in it, or which of two
// sets of trajectories is theirs), equally likely beforehand:
// e^ε/(1 + e^ε) (accountant.PureBestGuess).
func Meaning(epsilon float64) string {
	if !(epsilon >= 0) {
		return "no guarantee (epsilon is not a number >= 0)"
	}
	return fmt.Sprintf("epsilon %.4g per person: the best guess, from the release, of whether a person's trajectories are in it (or which of two sets of trajectories is theirs; equally likely beforehand) is right %s (50 %% is a coin toss; e^ε/(1+e^ε))",
		epsilon, accountant.GuessRate(accountant.PureBestGuess(epsilon)))
}

package accountant

import (
	"errors"
	"fmt"
)

// ErrUnsupported is matched (with errors.Is) by errors reporting that an
// accountant cannot bound an event, for instance an (ε, δ) event with δ > 0
// in an RDP accountant.
var ErrUnsupported = errors.New("event not supported by this accountant")

// NoGuaranteeError reports a composition that yields no privacy guarantee
// at all (the composed metric is infinite), such as parallel composition of
// bounded-DP mechanisms over a value-based partition (thesis Example 2.16).
// Callers that branch on it use errors.As.
type NoGuaranteeError struct {
	Rule   string // the composition rule that was asked for
	Reason string // why it gives no guarantee, with the reference
}

func (e *NoGuaranteeError) Error() string {
	return fmt.Sprintf("%s gives no privacy guarantee: %s", e.Rule, e.Reason)
}

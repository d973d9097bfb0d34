package accountant

import (
	"errors"
	"fmt"

	"github.com/tracepriv/tracepriv/param"
)

// ErrUnsupported is matched (with errors.Is) by errors reporting that an
// accountant cannot bound an event, for instance an (ε, δ) event with δ > 0
// in an RDP accountant.
var ErrUnsupported = errors.New("event not supported by this accountant")

// ParamError reports an invalid parameter of an event or a call. Its Name
// is the parameter's name as spelled in the event log format, so that event log
// errors can point at the offending field.
//
// Deprecated: use param.Error, which this is an alias of (the fields Param
// and Msg are now Name and Why).
type ParamError = param.Error

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

package param_test

import (
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/bdp"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/risk"
	"github.com/tracepriv/tracepriv/sanitize"
)

// One error type across packages: a bad parameter of any package is a
// *param.Error naming it (the packages have no sentinels or error types of
// their own for it).
func TestPackagesReportParamError(t *testing.T) {
	_, accErr := accountant.GDPEpsilon(1, 2)
	_, riskErr := risk.GRR(-1, 4)
	_, bdpErr := bdp.Groups{M: 2}.Tau(-1)
	for _, c := range []struct {
		pkg, name string
		err       error
	}{
		{"accountant", "delta", accErr},
		{"risk", "epsilon", riskErr},
		{"bdp", "epsilon", bdpErr},
		{"noise", "sigma", noise.Gaussian{Sigma: -1}.Validate()},
		{"geoind", "confidence", geoind.Config{}.Validate()},
		{"sanitize", "prior", sanitize.Options{Epsilon: 1}.Check()},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			var pe *param.Error
			if !errors.As(c.err, &pe) || !errors.Is(c.err, param.ErrInvalid) {
				t.Errorf("%s: %v is not a *param.Error", c.pkg, c.err)
				return
			}
			if c.pkg != "geoind" && pe.Name != c.name {
				t.Errorf("%s: names %q, want %q", c.pkg, pe.Name, c.name)
			}
		})
	}
}

package bdp

import (
	"fmt"
	"io"
)

// WriteText writes the calibration for people: tau and the noise factor,
// then every model tried, with the reason a model does not apply.
func (c Calibration) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "tau %.6g  factor %.6g  (epsilon %g, model %s)\n", c.Tau, c.Factor, c.Epsilon, c.Model)
	for _, m := range c.Candidates {
		var err error
		if m.Error != "" {
			_, err = fmt.Fprintf(w, "  %s: not applicable: %s\n", m.Model, m.Error)
		} else {
			_, err = fmt.Fprintf(w, "  %s: tau %.6g\n", m.Model, m.Tau)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

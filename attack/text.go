package attack

import (
	"fmt"
	"io"
	"time"
)

// WriteText writes the report for people: per person the adversary, its
// errors at the secret points beside the release's, and the model
// selection; then the place attack on stays, and the pooled errors.
func (r *CertReport) WriteText(w io.Writer) error {
	for _, p := range r.Persons {
		a := p.Adversary.East
		fmt.Fprintf(w, "person %q: %d points, %d secret points, certified epsilon %.4g", p.UID, p.Points, p.Secrets, p.EpsilonCertified)
		if p.Points < p.CertifiedPoints {
			fmt.Fprintf(w, " (the files given hold %d of the person's %d certified points)", p.Points, p.CertifiedPoints)
		}
		if p.Windows > 1 {
			fmt.Fprintf(w, "; attacked in %d windows (one attack of all points could do better)", p.Windows)
		}
		fmt.Fprintln(w)
		if a.Path == PathOnePoint {
			fmt.Fprintf(w, "  adversary: %s\n", a.MeanNote)
		} else {
			fmt.Fprintf(w, "  adversary (east): %s, lengthscale %.4g s, variance %.4g m^2 (%s), %s mean; %s path\n", a.Kernel, a.Lengthscale, a.Variance, a.Choice, a.Mean, a.Path)
			if a.MeanNote != "" {
				fmt.Fprintf(w, "  (%s)\n", a.MeanNote)
			}
		}
		fmt.Fprintf(w, "  error at secret points: reconstruction RMSE %.1f m (median %.1f), release read as is %.1f m (median %.1f)\n",
			p.ReconstructedRMSE, p.ReconstructedMedian, p.ReleasedRMSE, p.ReleasedMedian)
		fmt.Fprintf(w, "  within r = %g m: reconstruction %.1f %%, release %.1f %%; adversary's 2-sigma %.1f m, its 95 %% ellipses cover %.1f %%\n",
			p.Radius, 100*p.WithinRadius, 100*p.ReleaseWithinRadius, p.Posterior2Sigma, 100*p.Coverage95)
		if s := p.Selection; s != nil {
			fmt.Fprintf(w, "  model selection (prior family unknown to it): chose %s, lengthscale %.4g s east, %.4g s north; RMSE %.1f m (median %.1f)\n",
				s.Kernel, s.East.Lengthscale, s.North.Lengthscale, s.RMSE, s.Median)
		}
	}
	if r.StayRule != nil {
		if r.StayErrorM == nil {
			fmt.Fprintf(w, "places: no stay of %s or more within %g m in the true trace\n", time.Duration(r.StayRule.MinDurationS*float64(time.Second)), r.StayRule.RadiusM)
		} else {
			fmt.Fprintf(w, "places: %d stays of %s or more in the true trace; the stay's location is recovered to within %.1f m (median over stays; plain mean of the released points: %.1f m), against %.1f m RMS per released point\n",
				len(r.Stays), time.Duration(r.StayRule.MinDurationS*float64(time.Second)), *r.StayErrorM, *r.StayPlainMeanErrorM, r.ReleaseRMSE)
			for _, s := range r.Stays {
				sub := ""
				if s.PointsUsed < s.Points {
					sub = fmt.Sprintf(", %d used", s.PointsUsed)
				}
				fmt.Fprintf(w, "  stay %s-%s (%s, %d points%s): recovered to within %.1f m (stated SD %.1f m per coordinate), plain mean %.1f m\n",
					s.StartTime.Format(time.DateTime), s.EndTime.Format(time.TimeOnly), time.Duration(s.DurationS*float64(time.Second)).Round(time.Second), s.Points, sub, s.ErrorM, s.StatedSDM, s.PlainMeanErrorM)
			}
		}
	}
	if len(r.Persons) > 1 {
		fmt.Fprintf(w, "all %d secret points: reconstruction RMSE %.1f m, release %.1f m; within r: %.1f %%\n", r.SecretPoints, r.RMSE, r.ReleaseRMSE, 100*r.WithinRadius)
	}
	return nil
}

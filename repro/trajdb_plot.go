package repro

import (
	"strings"

	"github.com/tracepriv/tracepriv/trajdb"
	"github.com/tracepriv/tracepriv/viz"
)

// PlotMetrics draws the metrics of several releases side by side, as
// errors (lower is better): the two count-query errors in their own
// panel, the divergences, 1 - pattern F1, 1 - top-k precision and
// (1 - tau)/2 in [0, 1] in the other (tracepriv evaluate --plot).
func PlotMetrics(path, title string, labels []string, ms []*trajdb.Metrics) error {
	rows := MetricRows(ms...)
	var scoreNames, areNames []string
	are := make([]viz.BarSeries, len(ms))
	score := make([]viz.BarSeries, len(ms))
	for i := range ms {
		are[i].Label, score[i].Label = labels[i], labels[i]
	}
	for _, r := range rows {
		for i, v := range r.Values {
			switch r.Name {
			case "query_are", "paper_are":
				are[i].Values = append(are[i].Values, v)
			case "pattern_f1", "top_k_precision":
				score[i].Values = append(score[i].Values, 1-v)
			case "kendall_tau":
				score[i].Values = append(score[i].Values, (1-v)/2)
			default:
				score[i].Values = append(score[i].Values, v)
			}
		}
		switch r.Name {
		case "query_are":
			areNames = append(areNames, "query ARE")
		case "paper_are":
			areNames = append(areNames, "paper ARE")
		case "pattern_f1":
			scoreNames = append(scoreNames, "1 − F1")
		case "top_k_precision":
			scoreNames = append(scoreNames, "1 − top-k precision")
		case "kendall_tau":
			scoreNames = append(scoreNames, "(1 − τ)/2")
		default:
			scoreNames = append(scoreNames, strings.TrimSuffix(r.Name, "_jsd")+" JSD")
		}
	}
	// The uniform baseline's count-query error can be orders of magnitude
	// above the release's: a log axis, with every bar's value written on
	// it, keeps both readable.
	pa, err := viz.Bars(areNames, are, viz.BarOptions{Title: title + ": count queries", YLabel: "relative error (lower is better)", LogY: true, ValueLabels: true})
	if err != nil {
		return err
	}
	ps, err := viz.Bars(scoreNames, score, viz.BarOptions{Title: title + ": distributions and patterns", YLabel: "error in [0, 1] (lower is better)", YMax: 1.1, ValueLabels: true})
	if err != nil {
		return err
	}
	return viz.SaveRow(path, 0, 0, pa, ps)
}

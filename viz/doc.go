// Package viz draws tracepriv's figures with gonum/plot: traces on a local
// projected canvas (original against sanitised), and the line charts, bar
// charts and histograms of the reproduction experiments. Output is SVG,
// PNG or PDF by file extension and is written atomically.
//
// For example, a trace and its release on one map (orig and released are
// *trace.Trace values):
//
//	p, err := viz.Map([]viz.Series{
//		{Label: "original", Trace: orig, Role: viz.RoleOriginal},
//		{Label: "released", Trace: released, Role: viz.RoleReleased},
//	}, viz.MapOptions{Title: "original against released"})
//	if err != nil {
//		return err
//	}
//	return viz.Save(p, "map.svg", 0, 0) // SVG, PNG or PDF by extension; 0, 0: the default size
//
// Figures are meant to be read at a glance. Map gives every trace start (▲)
// and end (■) markers, colours traces by Role (or by label), keeps equal
// scales and draws a scale bar; Chart and Histogram use round ticks,
// powers of ten on log axes and light grid lines. On all of them, the
// legend (and a map's scale bar) is placed where it covers no line, point
// or bar, checked on the canvas actually drawn: in a corner or along an
// edge of the data area if one is free, otherwise outside it (under a map,
// above a chart). Save and SaveTiles fit a plot made by this package to
// the size it is saved at, and leave a margin so that the title never
// touches the edge.
package viz

// Package viz draws tracepriv's figures with gonum/plot: traces on a local
// projected canvas (original against sanitised), and the line charts, bar
// charts and histograms of the reproduction experiments. Output is SVG,
// PNG or PDF by file extension and is written atomically.
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

package viz

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// This file lets callers draw from plain Go values, so that only this
// package names gonum/plot's types.

// XYs returns the points (xs[i], ys[i]) of a Line. It panics if the slices
// differ in length, a programming error.
func XYs(xs, ys []float64) plotter.XYs {
	if len(xs) != len(ys) {
		panic(fmt.Sprintf("viz: XYs of %d x and %d y values", len(xs), len(ys)))
	}
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	return xy
}

// Centimetre is one centimetre, for the sizes of Save and SaveTiles.
const Centimetre = vg.Centimeter

// SaveRow writes plots side by side as one figure (SaveTiles with one
// row).
func SaveRow(path string, w, h vg.Length, plots ...*plot.Plot) error {
	return SaveTiles(path, [][]*plot.Plot{plots}, w, h)
}

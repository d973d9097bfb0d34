package repro

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/viz"
)

// figureExts are the formats of every figure: SVG to zoom into, PNG to
// show anywhere.
var figureExts = []string{".svg", ".png"}

// saveFigure writes p as base.svg and base.png at w x h (zero: viz's
// default size) and returns the paths written.
func saveFigure(p *plot.Plot, base string, w, h vg.Length) ([]string, error) {
	return saveEach(base, func(path string) error { return viz.Save(p, path, w, h) })
}

// saveTiles writes a figure of several plots (viz.SaveTiles) as base.svg
// and base.png and returns the paths written.
func saveTiles(rows [][]*plot.Plot, base string, w, h vg.Length) ([]string, error) {
	return saveEach(base, func(path string) error { return viz.SaveTiles(path, rows, w, h) })
}

func saveEach(base string, save func(path string) error) ([]string, error) {
	var files []string
	for _, ext := range figureExts {
		if err := save(base + ext); err != nil {
			return nil, err
		}
		files = append(files, base+ext)
	}
	return files, nil
}

// xyOf returns the points (x(r), y(r)) of rows, in order: one curve of a
// table of results.
func xyOf[R any](rows []R, x, y func(R) float64) plotter.XYs {
	xy := make(plotter.XYs, len(rows))
	for i, r := range rows {
		xy[i] = plotter.XY{X: x(r), Y: y(r)}
	}
	return xy
}

package viz

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
)

// saveMargin is the white border around a saved figure: gonum draws the
// title flush with the top edge of its canvas.
const saveMargin = vg.Length(7)

// pngDPI is the resolution of PNG output: gonum's default of 96 gives a
// 605-pixel-wide figure whose 10 pt labels are hard to read.
const pngDPI = 150

// defaultW and defaultH are the figure size when none is given.
const (
	defaultW = 16 * vg.Centimeter
	defaultH = 12 * vg.Centimeter
)

// ErrFormat is wrapped by the error of a figure path whose extension is
// none of .svg, .png and .pdf.
var ErrFormat = errors.New("unsupported image format")

// CheckFormat returns an error wrapping ErrFormat unless path names a
// format Save writes: a command checks its output path before the work
// that draws the figure.
func CheckFormat(path string) error {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case "png", "svg", "pdf": // newCanvas's cases
		return nil
	default:
		return fmt.Errorf("%s: %w %q (use .svg, .png or .pdf)", path, ErrFormat, ext)
	}
}

// Save writes p to path as SVG, PNG or PDF, chosen by the extension, at the
// given size (zero means 16 cm x 12 cm), with a white margin. A plot made
// by this package is first fitted to that size: the title wrapped to the
// width, a map's scales kept equal, and the legend moved outside the data
// area if nothing else keeps it off the data. The file is replaced
// atomically.
func Save(p *plot.Plot, path string, w, h vg.Length) error {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	w, h = defaultSize(w, h)
	wt, dc, err := newCanvas(ext, w, h)
	if err != nil {
		return fmt.Errorf("viz: %s: %w", path, err)
	}
	render(p, dc)
	return write(path, wt)
}

func defaultSize(w, h vg.Length) (vg.Length, vg.Length) {
	if w == 0 {
		w = defaultW
	}
	if h == 0 {
		h = defaultH
	}
	return w, h
}

func newCanvas(ext string, w, h vg.Length) (io.WriterTo, draw.Canvas, error) {
	switch ext {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
		return vgimg.PngCanvas{Canvas: c}, draw.New(c), nil
	case "svg":
		c := vgsvg.New(w, h)
		return c, draw.New(c), nil
	case "pdf":
		c := vgpdf.New(w, h)
		return c, draw.New(c), nil
	}
	return nil, draw.Canvas{}, fmt.Errorf("%w %q (use .svg, .png or .pdf)", ErrFormat, ext)
}

func write(path string, wt io.WriterTo) error {
	return atomicfile.Write(path, 0o644, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}

// render fills dc with p's background and draws p inside the margin,
// fitted to it.
func render(p *plot.Plot, dc draw.Canvas) {
	if p.BackgroundColor != nil {
		dc.SetColor(p.BackgroundColor)
		dc.Fill(dc.Rectangle.Path())
	}
	inner := draw.Crop(dc, saveMargin, -saveMargin, saveMargin, -saveMargin)
	size := inner.Size()
	fitPlot(p, size.X, size.Y)
	p.Draw(inner)
}

// SaveTiles writes a figure of several plots side by side and in rows
// (rows[i][j] is row i, column j; nil leaves a tile empty), as SVG, PNG or
// PDF by the extension, at w x h (zero: 16 cm x 12 cm per tile), with the
// data areas aligned across tiles. Plots made by this package are fitted
// to their tiles as Save fits them.
func SaveTiles(path string, rows [][]*plot.Plot, w, h vg.Length) error {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return fmt.Errorf("viz: %s: no plots", path)
	}
	cols := len(rows[0])
	for i, r := range rows {
		if len(r) != cols {
			return fmt.Errorf("viz: %s: row %d has %d plots, row 0 has %d", path, i, len(r), cols)
		}
	}
	if w == 0 {
		w = vg.Length(cols) * defaultW
	}
	if h == 0 {
		h = vg.Length(len(rows)) * defaultH
	}
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	wt, dc, err := newCanvas(ext, w, h)
	if err != nil {
		return fmt.Errorf("viz: %s: %w", path, err)
	}
	dc.SetColor(plot.New().BackgroundColor)
	dc.Fill(dc.Rectangle.Path())
	inner := draw.Crop(dc, saveMargin, -saveMargin, saveMargin, -saveMargin)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter}
	// Fit each plot to its tile, then align the fitted plots: fitting may
	// reserve room for a legend, which alignment must know about.
	for i, r := range rows {
		for j, p := range r {
			if p != nil {
				s := tiles.At(inner, j, i).Size()
				fitPlot(p, s.X, s.Y)
			}
		}
	}
	canvases := plot.Align(rows, tiles, inner)
	for i, r := range rows {
		for j, p := range r {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	return write(path, wt)
}

package trajdb

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// Universe is a finite, data-independent location universe: a partition of
// a public region into cells numbered 0..Size()-1. The mechanisms perturb
// counts over all of its cells, so it must never be derived from the data
// it is used to release.
type Universe interface {
	// Size is the number of cells (the alphabet size of sequences).
	Size() int
	// Cell returns the cell holding p, and false if p lies outside the
	// universe's region (or is not a valid position).
	Cell(p geo.Point) (int, bool)
	// Centre returns the representative point of a cell.
	Centre(cell int) geo.Point
}

// MaxCells caps the size of a universe (and of a symbolic alphabet): the
// exploration-tree mechanisms draw a noisy count for every cell below every
// expanded node, so larger universes are neither fast nor useful.
const MaxCells = 1_000_000

// maxHalfDiagonal bounds how far a box may reach from its centre (metres):
// beyond about 1000 km the tangent-plane grid's cells would be more than
// 1 % smaller on the ground than nominal.
const maxHalfDiagonal = 1_000_000

// Grid is a square grid over a public bounding box: the Universe the
// mechanisms use for GPS traces.
//
// Cells are squares of exactly CellM metres in the east-north tangent plane
// of the WGS84 ellipsoid at the box centre (geo.ENU), laid over the smallest
// plane rectangle that holds the whole box, and numbered row-major from the
// south-west: cell = row·Cols + col, rows growing north and columns east.
// Only the box and the cell size (both public) fix the grid; the data never
// does. Cells of the rectangle that lie outside the box (its corners, where
// meridians converge) are part of the universe but never hold a fix.
//
// True size: the tangent plane is an orthographic projection, so on the
// ground a cell at distance ρ from the centre is stretched along the radial
// direction by 1/cos(ρ/R) (R the Earth's radius) and exact across it.
// MaxDistortion returns that relative excess at the box's far corner; for a
// city-sized box (ρ ≈ 30 km) it is about 1e-5, i.e. 300 m cells are 300 m to
// within a few millimetres.
//
// The zero value is not usable: call NewGrid. A Grid marshals to JSON as its
// box, cell size and dimensions, and unmarshals by rebuilding it with
// NewGrid.
type Grid struct {
	Box   trace.BBox `json:"bbox"`
	CellM float64    `json:"cell_m"`
	Cols  int        `json:"cols"`
	Rows  int        `json:"rows"`
	enu   *geo.ENU
	// x0, y0 are the plane coordinates of the grid's south-west corner.
	x0, y0  float64
	halfDia float64 // largest distance of the box's corners from the centre
}

// checkGridBox reports whether a tangent-plane grid can be laid over b: a
// valid box (trace.BBox.Validate) with no corner more than 1000 km from
// its centre, beyond which the grid would distort it.
func checkGridBox(b trace.BBox) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if d := halfDiagonal(b); d > maxHalfDiagonal {
		return param.Invalid("bbox", fmt.Sprintf("%g,%g,%g,%g", b.MinLat, b.MinLon, b.MaxLat, b.MaxLon),
			fmt.Sprintf("reaches %.0f km from its centre; a tangent-plane grid is only accurate within %d km (split the region)", d/1000, maxHalfDiagonal/1000))
	}
	return nil
}

func boxCentre(b trace.BBox) geo.Point {
	return geo.Point{Lat: (b.MinLat + b.MaxLat) / 2, Lon: (b.MinLon + b.MaxLon) / 2}
}

func halfDiagonal(b trace.BBox) float64 {
	c := boxCentre(b)
	d := 0.0
	for _, p := range []geo.Point{{Lat: b.MinLat, Lon: b.MinLon}, {Lat: b.MinLat, Lon: b.MaxLon}, {Lat: b.MaxLat, Lon: b.MinLon}, {Lat: b.MaxLat, Lon: b.MaxLon}} {
		d = max(d, geo.Haversine(c, p))
	}
	return d
}

// NewGrid returns the grid of cellM-metre squares over the public box b. It
// refuses an invalid box (trace.BBox.Validate), a box reaching more than
// 1000 km from its centre, a non-positive cell size and a grid of more
// than MaxCells cells.
func NewGrid(b trace.BBox, cellM float64) (*Grid, error) {
	if err := checkGridBox(b); err != nil {
		return nil, err
	}
	if !(cellM > 0) || math.IsInf(cellM, 0) {
		return nil, fmt.Errorf("cell size %v m: want a positive number of metres", cellM)
	}
	g := &Grid{Box: b, CellM: cellM, enu: geo.NewENU(boxCentre(b)), halfDia: halfDiagonal(b)}
	// The box's edges are curves in the plane (parallels bow towards the
	// pole, meridians converge); sample them densely to find the plane
	// rectangle holding the box. Cell clamps the sub-millimetre slack.
	const steps = 256
	xmin, ymin := math.Inf(1), math.Inf(1)
	xmax, ymax := math.Inf(-1), math.Inf(-1)
	for i := 0; i <= steps; i++ {
		t := float64(i) / steps
		lat := b.MinLat + t*(b.MaxLat-b.MinLat)
		lon := b.MinLon + t*(b.MaxLon-b.MinLon)
		for _, p := range []geo.Point{{Lat: b.MinLat, Lon: lon}, {Lat: b.MaxLat, Lon: lon}, {Lat: lat, Lon: b.MinLon}, {Lat: lat, Lon: b.MaxLon}} {
			x, y := g.enu.Forward(p)
			xmin, xmax = min(xmin, x), max(xmax, x)
			ymin, ymax = min(ymin, y), max(ymax, y)
		}
	}
	cols := math.Ceil((xmax - xmin) / cellM)
	rows := math.Ceil((ymax - ymin) / cellM)
	if n := cols * rows; n > MaxCells {
		return nil, fmt.Errorf("a %g m grid over this box has %.4g×%.4g = %.4g cells, more than %d: use larger cells or a smaller box", cellM, cols, rows, n, MaxCells)
	}
	g.Cols, g.Rows = max(int(cols), 1), max(int(rows), 1)
	// Centre the grid on the rectangle so the slack is shared by both edges.
	g.x0 = (xmin+xmax)/2 - float64(g.Cols)*cellM/2
	g.y0 = (ymin+ymax)/2 - float64(g.Rows)*cellM/2
	return g, nil
}

// UnmarshalJSON rebuilds the grid from its box and cell size, and checks
// the dimensions recorded with them.
func (g *Grid) UnmarshalJSON(b []byte) error {
	var spec struct {
		Box   trace.BBox `json:"bbox"`
		CellM float64    `json:"cell_m"`
		Cols  int        `json:"cols"`
		Rows  int        `json:"rows"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	ng, err := NewGrid(spec.Box, spec.CellM)
	if err != nil {
		return err
	}
	if (spec.Cols != 0 || spec.Rows != 0) && (spec.Cols != ng.Cols || spec.Rows != ng.Rows) {
		return fmt.Errorf("grid: recorded as %d×%d cells, but this box and cell size give %d×%d", spec.Cols, spec.Rows, ng.Cols, ng.Rows)
	}
	*g = *ng
	return nil
}

// Size returns the number of cells, Cols·Rows.
func (g *Grid) Size() int { return g.Cols * g.Rows }

// Cell returns the cell holding p, and false if p is outside the box (or
// not a valid position). Points on the box's edges are inside.
func (g *Grid) Cell(p geo.Point) (int, bool) {
	b := g.Box
	if !(p.Lat >= b.MinLat && p.Lat <= b.MaxLat && p.Lon >= b.MinLon && p.Lon <= b.MaxLon) {
		return 0, false
	}
	x, y := g.enu.Forward(p)
	col := min(max(int(math.Floor((x-g.x0)/g.CellM)), 0), g.Cols-1)
	row := min(max(int(math.Floor((y-g.y0)/g.CellM)), 0), g.Rows-1)
	return row*g.Cols + col, true
}

// RowCol returns the row (from the south) and column (from the west) of a
// cell.
func (g *Grid) RowCol(cell int) (row, col int) { return cell / g.Cols, cell % g.Cols }

// Centre returns the centre of a cell (the tangent-plane square's centre,
// mapped back to the ellipsoid). It panics if cell is not in [0, Size()).
func (g *Grid) Centre(cell int) geo.Point {
	if cell < 0 || cell >= g.Size() {
		panic(fmt.Sprintf("trajdb: cell %d outside the grid's %d cells", cell, g.Size()))
	}
	row, col := g.RowCol(cell)
	return g.enu.Inverse(g.x0+(float64(col)+0.5)*g.CellM, g.y0+(float64(row)+0.5)*g.CellM)
}

// Distance returns the distance in metres between the centres of two
// cells in the grid's plane: CellM·hypot(Δrow, Δcol).
func (g *Grid) Distance(a, b int) float64 {
	ra, ca := g.RowCol(a)
	rb, cb := g.RowCol(b)
	return g.CellM * math.Hypot(float64(ra-rb), float64(ca-cb))
}

// MaxDistortion returns the largest relative excess of a cell's ground size
// over CellM anywhere in the box: 1/cos(ρ/R) − 1 at the corner farthest from
// the centre, ρ metres away along the ground (R = 6378137 m, the radius
// geo.Haversine uses; the ellipsoid's true radii of curvature differ by under
// 1 %, which changes this tiny number by as little).
func (g *Grid) MaxDistortion() float64 {
	return 1/math.Cos(g.halfDia/geo.WGS84A) - 1
}

// String describes the grid.
func (g *Grid) String() string {
	b := g.Box
	return fmt.Sprintf("%g m grid of %d×%d = %d cells over %g,%g,%g,%g", g.CellM, g.Cols, g.Rows, g.Size(), b.MinLat, b.MinLon, b.MaxLat, b.MaxLon)
}

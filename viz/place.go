package viz

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// obstacle is something drawn from data coordinates that a legend or a
// scale bar must not cover: a polyline, a set of glyphs, or a set of
// filled rectangles (bars).
type obstacle struct {
	xy plotter.XYs
	// joined marks a polyline; otherwise the points are separate glyphs.
	joined bool
	// filled marks rectangles: xy holds pairs of opposite corners, and a
	// box anywhere over one covers it, even if it meets no edge.
	filled bool
	// pad is half the line width, or the glyph radius.
	pad vg.Length
}

// canvasObstacle is an obstacle in canvas coordinates, split where a point
// has no finite image (a non-positive value on a log axis).
type canvasObstacle struct {
	parts  [][]vg.Point
	joined bool
	filled bool
	pad    vg.Length
	bbox   vg.Rectangle
}

// project maps the obstacles onto the data canvas c of p.
func project(obs []obstacle, c draw.Canvas, p *plot.Plot) []canvasObstacle {
	trX, trY := p.Transforms(&c)
	out := make([]canvasObstacle, 0, len(obs))
	for _, o := range obs {
		co := canvasObstacle{joined: o.joined, filled: o.filled, pad: o.pad}
		inf := vg.Length(math.Inf(1))
		co.bbox = vg.Rectangle{Min: vg.Point{X: inf, Y: inf}, Max: vg.Point{X: -inf, Y: -inf}}
		var part []vg.Point
		add := func(pt vg.Point) {
			part = append(part, pt)
			co.bbox.Min.X, co.bbox.Min.Y = min(co.bbox.Min.X, pt.X), min(co.bbox.Min.Y, pt.Y)
			co.bbox.Max.X, co.bbox.Max.Y = max(co.bbox.Max.X, pt.X), max(co.bbox.Max.Y, pt.Y)
		}
		for i, q := range o.xy {
			pt, ok := canvasPoint(trX, trY, q)
			switch {
			case o.filled:
				// A rectangle goes in whole, with both corners, or not at all.
				if i%2 == 1 {
					if a, aok := canvasPoint(trX, trY, o.xy[i-1]); aok && ok {
						add(a)
						add(pt)
					}
				}
			case !ok:
				if len(part) > 0 {
					co.parts = append(co.parts, part)
				}
				part = nil
			default:
				add(pt)
			}
		}
		if len(part) > 0 {
			co.parts = append(co.parts, part)
		}
		if len(co.parts) > 0 {
			co.bbox = inflate(co.bbox, o.pad)
			out = append(out, co)
		}
	}
	return out
}

// canvasPoint maps q onto the canvas; false if it has no finite image (a
// non-positive value on a log axis).
func canvasPoint(trX, trY func(float64) vg.Length, q plotter.XY) (vg.Point, bool) {
	x, y := float64(trX(q.X)), float64(trY(q.Y))
	if math.IsNaN(x+y) || math.IsInf(x+y, 0) {
		return vg.Point{}, false
	}
	return vg.Point{X: vg.Length(x), Y: vg.Length(y)}, true
}

func inflate(r vg.Rectangle, d vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: r.Min.X - d, Y: r.Min.Y - d}, Max: vg.Point{X: r.Max.X + d, Y: r.Max.Y + d}}
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func inside(pt vg.Point, r vg.Rectangle) bool {
	return pt.X >= r.Min.X && pt.X <= r.Max.X && pt.Y >= r.Min.Y && pt.Y <= r.Max.Y
}

// segmentHits reports whether the segment ab meets the rectangle r
// (Liang-Barsky clipping).
func segmentHits(a, b vg.Point, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	for _, pq := range [4][2]float64{
		{-dx, float64(a.X - r.Min.X)}, {dx, float64(r.Max.X - a.X)},
		{-dy, float64(a.Y - r.Min.Y)}, {dy, float64(r.Max.Y - a.Y)},
	} {
		p, q := pq[0], pq[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			t0 = max(t0, t)
		} else {
			if t < t0 {
				return false
			}
			t1 = min(t1, t)
		}
	}
	return true
}

// clearance is the free space kept between a placed box and any data.
const clearance = vg.Length(3)

// coverage counts the segments and glyphs of obs that come within
// clearance of r, stopping at limit (limit <= 0: no limit).
func coverage(r vg.Rectangle, obs []canvasObstacle, limit int) int {
	n := 0
	for i := range obs {
		o := &obs[i]
		rr := inflate(r, clearance+o.pad)
		if !overlaps(rr, o.bbox) {
			continue
		}
		for _, part := range o.parts {
			if o.filled {
				for j := 1; j < len(part); j += 2 {
					a, b := part[j-1], part[j]
					bar := vg.Rectangle{Min: vg.Point{X: min(a.X, b.X), Y: min(a.Y, b.Y)}, Max: vg.Point{X: max(a.X, b.X), Y: max(a.Y, b.Y)}}
					if overlaps(rr, bar) {
						n++
					}
				}
				continue
			}
			if o.joined && len(part) > 1 {
				for j := 1; j < len(part); j++ {
					if segmentHits(part[j-1], part[j], rr) {
						n++
					}
				}
			} else {
				for _, pt := range part {
					if inside(pt, rr) {
						n++
					}
				}
			}
			if limit > 0 && n >= limit {
				return n
			}
		}
	}
	return n
}

// anchor is a position of a box in its container: 0 left/bottom, 1
// right/top.
type anchor struct{ fx, fy float64 }

var (
	topRight    = anchor{1, 1}
	topLeft     = anchor{0, 1}
	bottomRight = anchor{1, 0}
	bottomLeft  = anchor{0, 0}
)

// candidates lists the anchors tried for a box: the preferred ones, then
// positions along the four edges of the container.
func candidates(prefs []anchor) []anchor {
	out := append([]anchor(nil), prefs...)
	const steps = 8
	for i := 0; i <= steps; i++ {
		f := float64(i) / steps
		out = append(out, anchor{f, 1}, anchor{f, 0})
	}
	for i := 1; i < steps; i++ {
		f := float64(i) / steps
		out = append(out, anchor{1, f}, anchor{0, f})
	}
	return out
}

// rectAt places a box of the given size at anchor a inside container.
func rectAt(container vg.Rectangle, size vg.Point, a anchor) (vg.Rectangle, bool) {
	free := container.Size()
	if size.X > free.X || size.Y > free.Y {
		return vg.Rectangle{}, false
	}
	minX := container.Min.X + vg.Length(a.fx)*(free.X-size.X)
	minY := container.Min.Y + vg.Length(a.fy)*(free.Y-size.Y)
	return vg.Rectangle{Min: vg.Point{X: minX, Y: minY}, Max: vg.Point{X: minX + size.X, Y: minY + size.Y}}, true
}

// spot is a box placed on the canvas.
type spot struct {
	rect vg.Rectangle
	free bool // covers no data and no other box
	ok   bool // placed at all
}

// findSpot returns the first candidate position inside container where a
// box of the given size covers no data and none of the taken boxes; if
// there is none, the candidate covering the least.
func findSpot(container vg.Rectangle, size vg.Point, prefs []anchor, obs []canvasObstacle, taken []vg.Rectangle) spot {
	best, bestN := spot{}, math.MaxInt
	for _, a := range candidates(prefs) {
		r, ok := rectAt(container, size, a)
		if !ok {
			continue
		}
		n := 0
		for _, t := range taken {
			if overlaps(inflate(r, clearance), t) {
				n += 1 << 20 // never share the space of another box
			}
		}
		limit := 0 // none: count everything for the first candidate
		if bestN < math.MaxInt {
			if limit = bestN - n; limit <= 0 {
				continue
			}
		}
		n += coverage(r, obs, limit)
		if n == 0 {
			return spot{rect: r, free: true, ok: true}
		}
		if n < bestN {
			best, bestN = spot{rect: r, ok: true}, n
		}
	}
	return best
}

package viz

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
)

// Save writes p to path as SVG, PNG or PDF, chosen by the extension, at the
// given size (zero means 16 cm x 12 cm). The file is replaced atomically.
func Save(p *plot.Plot, path string, w, h vg.Length) error {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "svg", "png", "pdf":
	default:
		return fmt.Errorf("viz: %s: unsupported image format %q (use .svg, .png or .pdf)", path, ext)
	}
	if w == 0 {
		w = 16 * vg.Centimeter
	}
	if h == 0 {
		h = 12 * vg.Centimeter
	}
	wt, err := p.WriterTo(w, h, ext)
	if err != nil {
		return fmt.Errorf("viz: %s: %w", path, err)
	}
	return atomicfile.Write(path, 0o644, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}

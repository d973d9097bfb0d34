package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Format names a trace file format.
type Format string

// The formats tracepriv reads and writes.
const (
	PLT     Format = "plt"     // GeoLife PLT: one trace per file
	CSV     Format = "csv"     // uid,time,lat,lon[,alt,...] with a header row
	GeoJSON Format = "geojson" // FeatureCollection of LineStrings (or of Points)
	GPX     Format = "gpx"     // GPX 1.1 tracks
)

// Formats lists every supported format.
var Formats = []Format{PLT, CSV, GeoJSON, GPX}

// ParseFormat returns the format called name (case-insensitive; "json" is
// GeoJSON).
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), ".")) {
	case "plt":
		return PLT, nil
	case "csv":
		return CSV, nil
	case "geojson", "json":
		return GeoJSON, nil
	case "gpx":
		return GPX, nil
	}
	return "", fmt.Errorf("%w %q (want plt, csv, geojson or gpx)", ErrUnknownFormat, name)
}

// FormatFromPath returns the format implied by path's extension: .plt, .csv,
// .geojson or .json, .gpx. A path without an extension that names a
// directory gets an error saying so.
func FormatFromPath(path string) (Format, error) {
	ext := filepath.Ext(TrimGz(path))
	if ext == "" {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return "", fmt.Errorf("%s is a directory, not a trace file (give a .plt, .csv, .geojson or .gpx file)", path)
		}
		return "", fmt.Errorf("%s: %w: no file extension to tell the format from (name the file .plt, .csv, .geojson or .gpx, or give the format)", path, ErrUnknownFormat)
	}
	f, err := ParseFormat(ext)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// TrimGz returns path without a final ".gz" (any case): the name of the
// file a gzip file holds, whose extension gives the format. Reading
// decompresses by content (the magic bytes), not by this suffix.
func TrimGz(path string) string {
	if ext := filepath.Ext(path); strings.EqualFold(ext, ".gz") {
		return path[:len(path)-len(ext)]
	}
	return path
}

// The spread of fitted effective lengthscales that Meehan and Chaudhuri
// shade on Figure 2.

package repro

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tracepriv/tracepriv/internal/stats"
)

// LEffBand is the spread of fitted effective lengthscales that the paper
// shades on Figure 2 (GeoLife for RBF panels, home temperature for
// periodic ones).
type LEffBand struct {
	Source string  `json:"source"`
	Values int     `json:"values"`
	Q25    float64 `json:"q25"`
	Median float64 `json:"median"`
	Q75    float64 `json:"q75"`
}

// RecordedLEffBands are the quartiles of Meehan and Chaudhuri's fitted
// l_eff (their saved_data: 3,762 GeoLife traces fitted per coordinate, x
// and y pooled as figure_2.py pools them; 10 SML2010 temperature series),
// as LoadLEffBands computes them from the authors' files, by kernel
// ("rbf", "periodic").
func RecordedLEffBands() map[string]*LEffBand {
	return map[string]*LEffBand{
		"rbf":      {Source: "Meehan & Chaudhuri's GeoLife l_eff fits (x and y, recorded quartiles)", Values: 7524, Q25: 2.66600731875, Median: 6.1034848055, Q75: 7.999996118},
		"periodic": {Source: "Meehan & Chaudhuri's temperature l_eff fits (recorded quartiles)", Values: 10, Q25: 1.0400445235, Median: 1.096819488, Q75: 1.14498017075},
	}
}

// LoadLEffBands reads the paper's l_eff fits from dir (l_eff_x.csv,
// l_eff_y.csv, l_eff_temp.csv): x and y pooled for RBF panels (as
// figure_2.py pools them), temperature for periodic ones.
func LoadLEffBands(dir string) (map[string]*LEffBand, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: no such directory (check the path)", dir)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is a file; give the directory that holds l_eff_x.csv, l_eff_y.csv and l_eff_temp.csv", dir)
	}
	read := func(names ...string) (*LEffBand, error) {
		var vals []float64
		for _, name := range names {
			v, err := readLEffCSV(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			vals = append(vals, v...)
		}
		slices.Sort(vals)
		return &LEffBand{Source: strings.Join(names, "+"), Values: len(vals),
			Q25: stats.Quantile7(vals, 0.25), Median: stats.Quantile7(vals, 0.5), Q75: stats.Quantile7(vals, 0.75)}, nil
	}
	rbf, err := read("l_eff_x.csv", "l_eff_y.csv")
	if err != nil {
		return nil, err
	}
	per, err := read("l_eff_temp.csv")
	if err != nil {
		return nil, err
	}
	return map[string]*LEffBand{"rbf": rbf, "periodic": per}, nil
}

// readLEffCSV reads a one-column CSV with the header "l_eff".
func readLEffCSV(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 1
	var out []float64
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 {
			if strings.TrimSpace(rec[0]) != "l_eff" {
				return nil, fmt.Errorf("%s:1: header %q, want \"l_eff\"", path, rec[0])
			}
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%s:%d: field \"l_eff\": %q is not a positive number", path, line, rec[0])
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no values", path)
	}
	return out, nil
}

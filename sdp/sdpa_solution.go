package sdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"
)

// SDPASolutionVersion is the version of the SDPASolution layout that
// WriteSDPASolution writes and ReadSDPASolution accepts.
const SDPASolutionVersion = 1

// SDPASolution is the JSON layout of a solved SDPA problem, as written by
// `tracepriv sdp solve --solution`: the primal X, the dual y and the slack
// Z, with blocks as dense row-major matrices, and the result summary.
type SDPASolution struct {
	Version int           `json:"version"`
	Status  Status        `json:"status"`
	Y       []float64     `json:"y"`
	X       [][][]float64 `json:"x"` // one per block
	Z       [][][]float64 `json:"z"`
	Result  *SDPAResult   `json:"result"`
}

// NewSDPASolution returns the SDPASolution layout of res.
func NewSDPASolution(res *SDPAResult) *SDPASolution {
	s := &SDPASolution{Version: SDPASolutionVersion, Status: res.Status, Y: res.Y, Result: res}
	for k := range res.X {
		s.X = append(s.X, denseRows(res.X[k]))
		s.Z = append(s.Z, denseRows(res.Z[k]))
	}
	return s
}

func denseRows(m *mat.Dense) [][]float64 {
	r, c := m.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		mat.Row(out[i], i, m)
	}
	return out
}

// WriteSDPASolution writes the SDPASolution layout of res to w as indented
// JSON ending in a newline.
func WriteSDPASolution(w io.Writer, res *SDPAResult) error {
	data, err := json.MarshalIndent(NewSDPASolution(res), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadSDPASolution reads an SDPASolution written by WriteSDPASolution. It
// refuses other versions and blocks that are not rectangular, and fills
// Result.X and Result.Z from the dense blocks (Result.Time and
// Result.Conic are not stored and stay zero).
func ReadSDPASolution(r io.Reader) (*SDPASolution, error) {
	var s SDPASolution
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("sdp solution: %w", err)
	}
	if s.Version != SDPASolutionVersion {
		return nil, fmt.Errorf("sdp solution: version %d, want %d", s.Version, SDPASolutionVersion)
	}
	if s.Result == nil {
		return nil, errors.New("sdp solution: no result")
	}
	if len(s.X) != len(s.Z) {
		return nil, fmt.Errorf("sdp solution: %d X blocks but %d Z blocks", len(s.X), len(s.Z))
	}
	s.Result.X, s.Result.Z = nil, nil
	for k := range s.X {
		x, err := fromRows(s.X[k])
		if err != nil {
			return nil, fmt.Errorf("sdp solution: X block %d: %w", k+1, err)
		}
		z, err := fromRows(s.Z[k])
		if err != nil {
			return nil, fmt.Errorf("sdp solution: Z block %d: %w", k+1, err)
		}
		s.Result.X = append(s.Result.X, x)
		s.Result.Z = append(s.Result.Z, z)
	}
	return &s, nil
}

func fromRows(rows [][]float64) (*mat.Dense, error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, errors.New("empty block")
	}
	c := len(rows[0])
	data := make([]float64, 0, len(rows)*c)
	for i, row := range rows {
		if len(row) != c {
			return nil, fmt.Errorf("row %d has %d entries, want %d", i+1, len(row), c)
		}
		data = append(data, row...)
	}
	return mat.NewDense(len(rows), c, data), nil
}

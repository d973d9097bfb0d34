// Package viz draws tracepriv's figures with gonum/plot: traces on a local
// projected canvas (original against sanitised), and the line charts of the
// reproduction experiments. Output is SVG, PNG or PDF by file extension and
// is written atomically.
package viz

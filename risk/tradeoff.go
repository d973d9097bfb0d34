package risk

import "math"

// OUETV is the total variation of optimised unary encoding, ½(e^ε−1)/(e^ε+1).
func OUETV(eps float64) float64 { return 0.5 * math.Tanh(eps/2) }

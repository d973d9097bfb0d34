package accountant

// F is Beta under the name the risk package's trade-off types used.
//
// Deprecated: use Beta (risk.GDPTradeOff is now an alias of this type).
func (g GaussianTradeOff) F(alpha float64) float64 { return g.Beta(alpha) }

// F is Beta under the name the risk package's trade-off types used.
//
// Deprecated: use Beta (risk.LaplaceTradeOff is now an alias of this type).
func (l LaplaceTradeOff) F(alpha float64) float64 { return l.Beta(alpha) }

// F is Beta under the name the risk package's trade-off types used.
//
// Deprecated: use Beta (risk.EpsDeltaTradeOff is now an alias of this type).
func (f EpsilonDeltaTradeOff) F(alpha float64) float64 { return f.Beta(alpha) }

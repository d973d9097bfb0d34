// Package repro is the one home of tracepriv's reproductions of its
// papers: each computes a paper's figures and tables with the library
// packages, draws them through viz and records them as JSON, and
// "tracepriv repro ..." is a thin command in front of it that wires flags,
// makes one call and prints the report (its WriteText method, or JSON):
//
//	res, err := repro.Thesis(repro.ThesisOptions{Reps: 2, Src: noise.Seeded(1)})
//	if err != nil {
//		return err
//	}
//	if err := repro.WriteThesis("thesis-output", res); err != nil {
//		return err
//	}
//	return res.WriteText(os.Stdout)
//
// The package is a layer of its own above every package it computes
// with, and only cmd/tracepriv imports it (CONTRIBUTING.md): a
// reproduction is an experiment in front of the library, never part of
// it. It is not under internal/, whose helpers the lowest packages
// import, so that no import runs back up the layers.
//
// One package rather than one per paper, because the reproductions share
// their output conventions (every figure as SVG and PNG beside a JSON
// file that lists them, written atomically) and that code should exist
// once; the papers are kept apart by file and by name prefix:
//
//   - cip_*.go, names CIP…: Meehan and Chaudhuri (AISTATS 2021): the
//     panels of Figure 2 (RunCIPFigure), the comparison of mechanisms at
//     equal MSE (CIPCompareAll) and the nugget sensitivity study of the
//     misspecified panels (CIPSensitivity, with the embedded mpmath
//     script mpposterior.py), and their figures.
//   - thesis.go, names Thesis…: Chapters 5 and 6 of Guerra-Balboa's
//     thesis: the closed-form RAD curves, black-box bounds, calibration
//     examples, BDP factors and the Chapter 6 utility experiment.
//   - thesis_ex37.go, names Example37…: the thesis's Example 3.7, the
//     inversion of a clustering mechanism's released centroid, against
//     the flawed mechanism (Hua et al.'s, data-dependent range) and the
//     corrected one (a public universe).
//   - trajdb_ch3.go and trajdb.go, names Chapter3…: Chapter 3 of the
//     thesis (Propositions 3.5 and 3.6, the audits of the negative
//     controls, the home/work quasi-identifier attack after Proposition
//     3.5) with package trajdb's mechanisms, audit and attack;
//     trajdb_utility.go and trajdb.go, names TrajDB… and MarkovPopulation:
//     the utility of the trajectory-database releases against uniform and
//     non-private ones, and the synthetic populations it is measured on.
//     trajdb_data.go: the demonstration and commuter databases of
//     internal/trajdata as trajdb databases.
//   - predictive_casestudy.go and predictive.go, names Predictive…: the
//     case study of the predictive mechanism (Chatzikokolakis et al.,
//     Sec. V) with package geoind's mechanisms, and its figures.
//
// Each "tracepriv repro ..." command is one call here (RunCIPPanels,
// ReplotCIPPanels, RunCIPSensitivities, RunCIPCompare, RunPredictive,
// RunTrajDB, Thesis, Chapter3, ReproduceExample37; the *_run.go files)
// and prints the report it returns with the report's WriteText.
//
// What each run reproduces, and how it compares with the paper, is
// recorded in docs/ (reproduction-cip.md, cip-compare.md,
// reproduction-thesis.md, trajdb.md, audit.md, reproduction-predictive.md).
package repro

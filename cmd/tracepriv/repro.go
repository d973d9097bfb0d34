package main

import (
	"math"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
)

// The "repro" commands run the reproductions of package repro: each is a
// type with its flags and a run that makes one call and prints the
// report (its WriteText, or JSON).

func init() { register(newReproCmd) }

// reproSubcommands are the experiments under "tracepriv repro"; files add
// to it with registerRepro so that one parent command holds them all.
var reproSubcommands []func(env *cli.Env) *cobra.Command

func registerRepro(f func(env *cli.Env) *cobra.Command) {
	reproSubcommands = append(reproSubcommands, f)
}

func newReproCmd(env *cli.Env) *cobra.Command {
	long, example := help("repro")
	cmd := &cobra.Command{
		Use:     "repro",
		Short:   "Reproduce the experiments of the papers tracepriv implements",
		Long:    long,
		Example: example,
	}
	for _, f := range reproSubcommands {
		cmd.AddCommand(f(env))
	}
	return cmd
}

// stageBars shows a reproduction's progress, reported by stage ("figure
// 2a"), as one bar per stage. finish ends the last bar.
type stageBars struct {
	env   *cli.Env
	stage string
	bar   *progressbar.ProgressBar
}

func (s *stageBars) progress(stage string, done, total int) {
	if s.bar == nil || stage != s.stage {
		s.finish()
		s.stage, s.bar = stage, s.env.Progress(total, stage)
	}
	s.bar.ChangeMax(total)
	_ = s.bar.Set(done)
}

func (s *stageBars) finish() {
	if s.bar != nil {
		_ = s.bar.Finish()
		s.bar = nil
	}
}

// positiveList reads a comma-separated flag value of positive finite
// numbers.
func positiveList(flag, v string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return nil, usageErrorf("%s: %q is not a positive number", flag, f)
		}
		out = append(out, x)
	}
	return out, nil
}

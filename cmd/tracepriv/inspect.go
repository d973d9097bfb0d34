package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/trace"
)

func init() { register(newInspectCmd) }

// inspectCmd is "tracepriv inspect".
type inspectCmd struct {
	env *cli.Env
	rf  cli.ReadFlags
	lf  cli.LimitFlags
}

func newInspectCmd(env *cli.Env) *cobra.Command {
	c := &inspectCmd{env: env}
	long, example := help("inspect")
	cmd := &cobra.Command{
		Use:     "inspect FILE|DIR...",
		Short:   "Summarise traces: points, duration, sampling, speeds, well-formedness, plausibility",
		Long:    long,
		Example: example,
		Args:    cobra.MinimumNArgs(1),
		RunE:    func(_ *cobra.Command, args []string) error { return c.run(args) },
	}
	c.lf.Add(cmd)
	c.rf.Add(cmd)
	c.rf.AddCorpus(cmd.Flags(), "the uid column shows each trace's person")
	return cmd
}

func (c *inspectCmd) run(args []string) error {
	lim, err := c.lf.Limits()
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	formats := map[trace.Format]bool{}
	var files []string
	var traces []*trace.Trace
	rep, err := c.rf.ReadEach(args, func(path string, ts []*trace.Trace) {
		if o, err := c.rf.Options(path); err == nil {
			formats[o.Format] = true
		}
		files = append(files, path)
		traces = append(traces, ts...)
	})
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	c.env.ReportSkipped(rep)
	res := trace.Inspect(files, formats, traces, rep, lim)
	return c.env.Emit(res, res.WriteText)
}

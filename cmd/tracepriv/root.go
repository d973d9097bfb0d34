package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
)

// subcommands is filled by the init functions of this package's files, one
// file per command group, so that each group stays self-contained.
var subcommands []func(env *cli.Env) *cobra.Command

func register(f func(env *cli.Env) *cobra.Command) { subcommands = append(subcommands, f) }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	env := &cli.Env{Stdout: stdout, Stderr: stderr}
	root := &cobra.Command{
		Use:   "tracepriv",
		Short: "Release location traces with correlation-aware privacy guarantees",
		Long: `tracepriv sanitises location traces with formal privacy guarantees that
account for the correlation between points, and accounts, measures and
audits those guarantees.

Randomness comes from crypto/rand unless --seed is given; seeded output is
reproducible and carries no privacy guarantee.`,
		Example: `  tracepriv demo --out demo-output          # the main job on the bundled sample trace
  tracepriv inspect demo-output/sample.plt
  tracepriv sanitize --help                  # every command has examples like these`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			env.SeedSet = cmd.Flags().Changed("seed")
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.BoolVar(&env.JSON, "json", false, "print machine-readable JSON on stdout")
	pf.Uint64Var(&env.Seed, "seed", 0, "use a seeded random source (tests and reproductions only: NOT private)")
	pf.BoolVarP(&env.Quiet, "quiet", "q", false, "no progress bars or warnings on stderr")
	for _, f := range subcommands {
		root.AddCommand(f(env))
	}
	return root
}

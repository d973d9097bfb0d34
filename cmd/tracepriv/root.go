package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/server"
)

// subcommands is filled by the init functions of this package's files, one
// file per command group, so that each group stays self-contained.
var subcommands []func(env *cli.Env) *cobra.Command

func register(f func(env *cli.Env) *cobra.Command) { subcommands = append(subcommands, f) }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	env := &cli.Env{Stdout: stdout, Stderr: stderr, OpenDatabase: server.OpenLedgerStore}
	long, example := help("tracepriv")
	root := &cobra.Command{
		Use:           "tracepriv",
		Short:         "Release location traces with correlation-aware privacy guarantees",
		Long:          long,
		Example:       example,
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
	flagErrors(root)
	envs.Store(root, env)
	return root
}

// envs holds each root command's Env (*cobra.Command to *cli.Env), for
// runMain's error output; a sync.Map because the tests build root commands
// from parallel tests.
var envs sync.Map

// rootEnv returns the Env of a root command newRootCmd made.
func rootEnv(root *cobra.Command) *cli.Env {
	if env, ok := envs.Load(root); ok {
		return env.(*cli.Env)
	}
	return &cli.Env{Stdout: root.OutOrStdout(), Stderr: root.ErrOrStderr()}
}

// flagErrors makes every error of the command line itself a
// *cli.FlagError, so that --json gives it the code invalid_flag: flag
// parsing, argument counts, required flags and unknown commands, which
// cobra returns as plain errors.
func flagErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cli.FlagError{Err: err} })
	// An unknown command is the root's argument error, which cobra
	// returns untyped (and a root that cannot run answers with its help,
	// status 0): the root runs, showing its help without arguments.
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return &cli.FlagError{Err: errors.New(msg)}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c != root && c.Args != nil {
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &cli.FlagError{Err: err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	// Required flags and flag groups are checked after the pre-run: check
	// them here first, typed.
	pre := root.PersistentPreRun
	root.PersistentPreRun = nil
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		pre(cmd, args)
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return &cli.FlagError{Err: err}
		}
		if err := cmd.ValidateFlagGroups(); err != nil {
			return &cli.FlagError{Err: err}
		}
		return nil
	}
}

// helpMeaning is help with each {{meaning}} of the Long text filled in,
// in order, with meanings, and its paragraph (one line in the file)
// wrapped: what a default epsilon means is the library's words
// (sanitize.MeaningOf, geoind.Meaning), the rest the help file's.
func helpMeaning(path string, meanings ...string) (long, example string) {
	long, example = help(path)
	lines := strings.Split(long, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "{{meaning}}") {
			continue
		}
		for len(meanings) > 0 && strings.Contains(l, "{{meaning}}") {
			l, meanings = strings.Replace(l, "{{meaning}}", meanings[0], 1), meanings[1:]
		}
		lines[i] = cli.Wrap(l, cli.HelpWidth)
	}
	return strings.Join(lines, "\n"), example
}

// usageErrorf is an error of the command line (a flag's value, a missing
// or contradictory flag): --json gives it the code invalid_flag.
func usageErrorf(format string, a ...any) error {
	return &cli.FlagError{Err: fmt.Errorf(format, a...)}
}

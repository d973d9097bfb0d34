package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func init() { register(newVersionCmd) }

// versionCmd is "tracepriv version".
type versionCmd struct{ env *cli.Env }

func newVersionCmd(env *cli.Env) *cobra.Command {
	c := &versionCmd{env: env}
	_, example := help("version")
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the tracepriv version",
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
}

func (c *versionCmd) run() error {
	info := map[string]string{"version": version, "go": runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info["module_version"] = bi.Main.Version
	}
	return c.env.Emit(info, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "tracepriv %s (%s)\n", version, runtime.Version())
		return err
	})
}

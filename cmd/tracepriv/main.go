// Command tracepriv releases location traces with formal, correlation-aware
// privacy guarantees, and accounts, measures and audits those guarantees.
// Run "tracepriv help" for the subcommands.
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs the command line args and returns the exit status. An
// error is printed as JSON on stdout under --json (cli.ErrorBody), else
// on stderr; either way the status is 1.
func runMain(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	env := rootEnv(root)
	// --json may not have been parsed when the error is in an earlier
	// flag; the arguments still say it was asked for.
	env.JSON = env.JSON || wantsJSON(args)
	env.EmitError(err)
	return 1
}

// wantsJSON reports whether args hold --json (before any "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1":
			return true
		}
	}
	return false
}

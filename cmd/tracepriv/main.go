// Command tracepriv releases location traces with formal, correlation-aware
// privacy guarantees, and accounts, measures and audits those guarantees.
// Run "tracepriv help" for the subcommands.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "tracepriv:", err)
		os.Exit(1)
	}
}

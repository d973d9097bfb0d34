package param

import (
	"errors"
	"fmt"
)

// AsFlag words err for a command line when it holds an *Error: "--flag: "
// and err's text, where flag is flags[Name], or Name itself when flags has
// no entry for it (an option's name is its flag's). Both command lines,
// tracepriv and the Beam pipeline's, name their flags through it, so that
// the mapping reads the error's fields and never its text. The result
// wraps err, so errors.As and errors.Is still find the *Error. When err
// holds no *Error, AsFlag returns it unchanged and ok is false.
func AsFlag(err error, flags map[string]string) (_ error, ok bool) {
	var pe *Error
	if !errors.As(err, &pe) {
		return err, false
	}
	name := flags[pe.Name]
	if name == "" {
		name = pe.Name
	}
	return fmt.Errorf("--%s: %w", name, err), true
}

package infile

import "fmt"

// Worded returns an error with a message written for the person who reads
// it, the format and a, that still unwraps to cause, so that errors.Is and
// errors.As (which the --json error codes are chosen by, never the text)
// see what went wrong: a missing file, a directory without traces.
func Worded(cause error, format string, a ...any) error {
	return &worded{msg: fmt.Sprintf(format, a...), err: cause}
}

type worded struct {
	msg string
	err error
}

func (e *worded) Error() string { return e.msg }
func (e *worded) Unwrap() error { return e.err }

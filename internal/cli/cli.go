// Package cli is the glue shared by tracepriv's subcommands: output in text
// or JSON, the random source chosen by --seed, progress bars, and errors
// that map to exit status 1.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
)

// Env carries the global flags into a subcommand.
type Env struct {
	JSON    bool
	Seed    uint64
	SeedSet bool
	Quiet   bool
	Stdout  io.Writer
	Stderr  io.Writer
	// OpenDatabase opens the service's database as a ledger (--ledger
	// sqlite:PATH or postgres://...); nil: ledger files only.
	OpenDatabase OpenDatabase
	// emitted is set once Emit has printed the result, so that an error
	// after it does not print a second JSON document (EmitError).
	emitted bool
}

// Source returns the random source the user asked for: crypto/rand unless
// --seed was given. A seeded source is announced on stderr, because its
// output carries no privacy guarantee.
func (e *Env) Source() noise.Source {
	if e.SeedSet {
		if !e.Quiet {
			fmt.Fprintf(e.Stderr, "tracepriv: warning: using seeded randomness (--seed %d); output is reproducible and NOT private\n", e.Seed)
		}
		return noise.Seeded(e.Seed)
	}
	return noise.Secure()
}

// Emit prints v as indented JSON with --json, or calls text otherwise.
func (e *Env) Emit(v any, text func(w io.Writer) error) error {
	if e.JSON {
		// Encoded whole first: a value JSON cannot carry (an infinite
		// loss) once left half a document on stdout and no error body.
		var buf bytes.Buffer
		if err := jsondoc.Write(&buf, v); err != nil {
			var uv *json.UnsupportedValueError
			if !errors.As(err, &uv) {
				return err
			}
			var t bytes.Buffer
			if terr := text(&t); terr != nil {
				return err
			}
			return &RefusedError{Err: fmt.Errorf("the result holds %s, which JSON cannot carry; without --json it reads:\n%s", uv.Str, strings.TrimSpace(t.String()))}
		}
		e.emitted = true
		_, err := buf.WriteTo(e.Stdout)
		return err
	}
	e.emitted = true
	return text(e.Stdout)
}

// Progress returns a progress bar on stderr for long work. It is silent when
// stderr is not a terminal, with --json, or with --quiet, so scripted output
// stays clean.
func (e *Env) Progress(total int, what string) *progressbar.ProgressBar {
	f, ok := e.Stderr.(*os.File)
	if e.JSON || e.Quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return progressbar.DefaultSilent(int64(total), what)
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
}

// Bar is Progress as two functions: a step of the bar and its end.
func (e *Env) Bar(total int, what string) (step func(string), finish func()) {
	bar := e.Progress(total, what)
	return func(string) { bar.Add(1) }, func() { bar.Finish() }
}

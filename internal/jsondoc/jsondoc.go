// Package jsondoc reads and writes the JSON documents tracepriv keeps in
// files (certificates, priors, ledgers, states, manifests) one way:
// indented on write; strict on read, so that a misspelt field, trailing
// data or a document of another version is an error rather than a
// silently different meaning.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Write encodes v as JSON indented by two spaces, with a final newline.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Decode decodes the single JSON value in data into v, refusing unknown
// fields and anything after the value.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// ErrVersion is wrapped by DecodeVersion for a document of another
// version.
var ErrVersion = errors.New("unsupported version")

// DecodeVersion is Decode for a document with a top-level "version"
// field: a version other than want is refused (wrapping ErrVersion)
// before the rest is decoded, so that the error names the version rather
// than a field the version renamed.
func DecodeVersion(data []byte, want int, v any) error {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	if head.Version != want {
		return fmt.Errorf("%w: version %d (want %d)", ErrVersion, head.Version, want)
	}
	return Decode(data, v)
}

// ReadFile opens path and reads it with read, naming the file in errors.
func ReadFile[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// unknownFieldPrefix opens encoding/json's error for a field the target
// does not have (Decoder.DisallowUnknownFields): `json: unknown field "f"`.
const unknownFieldPrefix = "json: unknown field "

// UnknownField returns the field an error of a strict decode names as
// unknown. encoding/json has no error type for it (golang/go#29035), so
// this is the one place in tracepriv that reads an error's text, and
// TestUnknownField pins the text of the Go release in use.
func UnknownField(err error) (field string, ok bool) {
	if err == nil {
		return "", false
	}
	f, ok := strings.CutPrefix(err.Error(), unknownFieldPrefix)
	if !ok {
		return "", false
	}
	return strings.Trim(f, `"`), true
}

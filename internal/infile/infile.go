// Package infile opens the files tracepriv reads, decompressing gzip by
// content: a file whose first bytes are gzip's magic number (1f 8b) is
// read through compress/gzip whatever its name, so that "msnbc.dat.gz",
// "trace.plt.gz" and a compressed file renamed without the suffix all
// read as the text they hold. It also words excerpts of bad input short
// and escaped, so that an error never dumps binary.
package infile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// gzipMagic opens every gzip stream (RFC 1952, section 2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// Open opens the file at path for reading, through a gzip reader when its
// content starts with gzip's magic number. Errors of the decompression
// (a truncated or corrupt file) name path. Closing the result closes the
// file.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &readCloser{Reader: r, f: f}, nil
}

type readCloser struct {
	io.Reader
	f *os.File
}

func (r *readCloser) Close() error { return r.f.Close() }

// NewReader returns r decompressed when it starts with gzip's magic
// number, and r's bytes unchanged otherwise. name is used in errors.
func NewReader(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !bytes.Equal(head, gzipMagic) {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: starts like a gzip file but cannot be decompressed: %w", name, err)
	}
	return &gzipErrors{r: zr, name: name}, nil
}

// gzipErrors names the file in errors of the decompression, which would
// otherwise read as errors of the format being parsed.
type gzipErrors struct {
	r    io.Reader
	name string
}

func (g *gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: gzip: %w (the compressed file is truncated or damaged)", g.name, err)
	}
	return n, err
}

// ReadFile reads the whole file at path, decompressed if it is gzip.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// IsGzip reports whether b starts with gzip's magic number.
func IsGzip(b []byte) bool { return bytes.HasPrefix(b, gzipMagic) }

// ExcerptLen is the most bytes of bad input Excerpt quotes.
const ExcerptLen = 40

// Excerpt quotes at most ExcerptLen bytes of b as a Go string literal
// (non-printable and invalid bytes escaped), followed by "…" and the
// full length when b is longer: enough to recognise the input, never a
// dump of it.
func Excerpt(b []byte) string {
	if len(b) <= ExcerptLen {
		return strconv.Quote(string(b))
	}
	cut := ExcerptLen
	// Do not split a UTF-8 sequence: back up to a rune start.
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(string(b[:cut])), len(b))
}

// PublicName is how an output meant to be published (a prior, a
// certificate, a manifest) names a file or directory the user gave: its
// path relative to the working directory when it lies inside it, else
// its base name. Either way no absolute path of the machine (a home
// directory, a user name, a mount) lands in a published file.
func PublicName(path string) string {
	clean := filepath.Clean(path)
	rel := clean
	if filepath.IsAbs(clean) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Base(clean)
		}
		if rel, err = filepath.Rel(wd, clean); err != nil {
			return filepath.Base(clean)
		}
	}
	if rel == "." {
		// The working directory itself: its name says more than ".".
		if abs, err := filepath.Abs(clean); err == nil {
			return filepath.Base(abs)
		}
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return filepath.Base(clean)
	}
	return rel
}

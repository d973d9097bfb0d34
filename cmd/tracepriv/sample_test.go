package main

import (
	"bytes"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// samplePoints is the number of fixes of the bundled sample trace
// (sample.PLT), which tests expect a command to read or release in full.
func samplePoints(t testing.TB) int {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{Name: sample.Name, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return tr.Len()
}

package device

import (
	"bytes"
	"testing"

	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// TestDrawRefusesAnotherCertificate is the guard's negative control: a
// plan whose charged digest is not the drawn certificate's (as a
// certificate that read a coordinate would make) answers nothing.
func TestDrawRefusesAnotherCertificate(t *testing.T) {
	traces, err := sample.Traces()
	if err != nil {
		t.Fatal(err)
	}
	var plt bytes.Buffer
	if err := trace.Write(&plt, traces[:1], trace.PLT); err != nil {
		t.Fatal(err)
	}
	p, err := PlanReleaseSeeded(plt.Bytes(), "plt", `{"epsilon":1,"lambda":2,"radius_m":100}`, 5)
	if err != nil {
		t.Fatal(err)
	}
	p.digest = "00" + p.digest[2:]
	if out, err := p.Draw("c-internal-mismatch"); err == nil || out != nil {
		t.Errorf("a release under another certificate was answered: %v, %d bytes", err, len(out))
	}
}

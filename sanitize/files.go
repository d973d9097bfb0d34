package sanitize

import (
	"fmt"
	"io"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/matfile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// CertificateSuffix ends the name of a release's certificate file: the
// certificate of out.plt is out.plt.cert.json (CertificatePath), where
// sanitize, attack and the demo look for it.
const CertificateSuffix = ".cert.json"

// CertificatePath is the default certificate file of the released traces
// file traces.
func CertificatePath(traces string) string { return traces + CertificateSuffix }

// MaxNoiseCovariancePoints bounds Files.NoiseCovariance: the matrix is
// dense, n x n numbers in text.
const MaxNoiseCovariancePoints = 5000

// Files is where a release of one input goes: the released traces and
// their certificate, which land together or not at all (a released trace
// is never left without the certificate that states its guarantee).
// Corpus writes whole directories its own way.
type Files struct {
	// Traces is the released traces' file, written in Format.
	Traces string
	// Format is the released traces' format; empty: from Traces' extension
	// (trace.FormatFromPath, as trace.WriteFile does).
	Format trace.Format
	// Certificate is the certificate's file (WriteCertificate).
	Certificate string
	// NoiseCovariance, if set, also receives the per-dimension noise
	// covariance of the certificate's only person over the input's points
	// in input order, as a matrix file (Certificate.InputNoiseCovariance;
	// at most MaxNoiseCovariancePoints points). It is public: a function
	// of the certificate and the public timestamps.
	NoiseCovariance string
}

// Write writes released and cert, from a Release of inputs (inputs are
// needed only for NoiseCovariance). Nothing is written when anything fails.
// A NoiseCovariance that cannot be written (several people, too many
// points) is a *param.Error named "NoiseCovariance".
func (f Files) Write(inputs, released []*trace.Trace, cert *Certificate) error {
	format, err := f.format()
	if err != nil {
		return err
	}
	return f.write(cert, inputs, func(w io.Writer) error { return trace.Write(w, released, format) })
}

// format is the released traces' format: Format, or the one Traces' name
// implies.
func (f Files) format() (trace.Format, error) {
	if f.Format != "" || f.Traces == "" {
		return f.Format, nil // an empty Traces is refused by write
	}
	format, err := trace.FormatFromPath(f.Traces)
	if err != nil {
		return "", fmt.Errorf("Files.Traces: %w (or set Files.Format)", err)
	}
	return format, nil
}

// WriteStream makes s's second pass into f.Traces and writes cert beside
// it, together or not at all. A stream has no NoiseCovariance (it holds no
// input in memory).
func (f Files) WriteStream(s *Stream, cert *Certificate) error {
	if f.NoiseCovariance != "" {
		return param.Invalid("NoiseCovariance", f.NoiseCovariance, "a streamed release writes no noise covariance; release the traces in memory for it")
	}
	format, err := f.format()
	if err != nil {
		return err
	}
	return f.write(cert, nil, func(w io.Writer) error { return s.WriteTo(w, format) })
}

func (f Files) write(cert *Certificate, inputs []*trace.Trace, traces func(io.Writer) error) error {
	if f.Traces == "" || f.Certificate == "" {
		return fmt.Errorf("a release needs a traces file and a certificate file")
	}
	files := []atomicfile.File{
		{Path: f.Traces, Perm: 0o644, Fill: traces},
		{Path: f.Certificate, Perm: 0o644, Fill: func(w io.Writer) error { return WriteCertificate(w, cert) }},
	}
	if f.NoiseCovariance != "" {
		if len(cert.Persons) != 1 {
			return param.Invalid("NoiseCovariance", f.NoiseCovariance, fmt.Sprintf("the input has %d people; the covariance is per person (split the input)", len(cert.Persons)))
		}
		if n := cert.Persons[0].Points; n > MaxNoiseCovariancePoints {
			return param.Invalid("NoiseCovariance", f.NoiseCovariance, fmt.Sprintf("the person has %d points, above the %d a dense matrix file is written for", n, MaxNoiseCovariancePoints))
		}
		g, err := cert.InputNoiseCovariance(inputs)
		if err != nil {
			return fmt.Errorf("noise covariance: %w", err)
		}
		files = append(files, atomicfile.File{Path: f.NoiseCovariance, Perm: 0o644, Fill: func(w io.Writer) error { return matfile.Write(w, g) }})
	}
	return atomicfile.WriteGroup(files)
}

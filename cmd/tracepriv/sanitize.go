package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// fileCertificate is the certificate file of a multi-trace input: the
// headline fields over every trace, then each trace's certificate.
type fileCertificate struct {
	Version    int                          `json:"version"`
	Method     string                       `json:"method"`
	Lambda     float64                      `json:"lambda"`
	RadiusM    float64                      `json:"radius_m"`
	EpsilonMax float64                      `json:"epsilon_max"`
	Secrets    []sanitize.SecretCertificate `json:"secrets"`
	Traces     []*sanitize.Certificate      `json:"traces"`
	Note       string                       `json:"note"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			in, out, priorFile, secrets, certFile, origin string
			eps, lambda, radius, delta                    float64
			lenient                                       bool
		)
		cmd := &cobra.Command{
			Use:   "sanitize --in TRACE --out TRACE --prior PRIOR.json --epsilon E --lambda L --radius METRES",
			Short: "Release a trace with conditional inferential privacy (optimal correlated Gaussian noise)",
			Long: `Sanitise a trace so that, for every secret, a Gaussian-process adversary with
the prior of PRIOR.json (any mean) changes its beliefs about the secret
locations by at most epsilon in Rényi divergence of order lambda, between
any two hypotheses within radius METRES (conditional inferential privacy,
Meehan & Chaudhuri). The least total noise that achieves it is designed from
the timestamps and the prior only (cip-math.md (E2)/(E3)), certified with the
exact loss (E1), sampled from crypto/rand (unless --seed) and added in local
metres.

--secrets all (default): every point is a basic secret. Otherwise a
comma-separated list of times (RFC 3339, or Unix seconds), ";" joining the
times of one compound secret (quote it in the shell), or a file with one secret per line in the same
syntax (# comments). Every time must be a timestamp of the trace.

Writes the sanitised trace in the input format (timestamps kept; altitude and
attributes dropped) and a JSON certificate (--certificate, default
OUT.cert.json): the prior, the secrets with their certified epsilon and
prior-posterior gap (--delta), the noise budget, the method and the
randomness. Use a prior fitted on other data (tracepriv fit) and a public
--origin for a strict guarantee.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				f := cmd.Flags()
				for _, req := range []string{"in", "out", "prior", "epsilon", "lambda", "radius"} {
					if !f.Changed(req) {
						return fmt.Errorf("sanitize: --%s is required", req)
					}
				}
				inFmt, err := trace.FormatFromPath(in)
				if err != nil {
					return fmt.Errorf("sanitize: --in: %w", err)
				}
				if outFmt, err := trace.FormatFromPath(out); err == nil && outFmt != inFmt {
					return fmt.Errorf("sanitize: --out %s is %s but the input is %s; the sanitised trace keeps the input format", out, outFmt, inFmt)
				}
				pr, err := gp.ReadPriorFile(priorFile)
				if err != nil {
					return fmt.Errorf("sanitize: --prior: %w", err)
				}
				traces, _, err := trace.ReadFile(in, trace.ReadOptions{Lenient: lenient})
				if err != nil {
					return fmt.Errorf("sanitize: %w", err)
				}
				if len(traces) == 0 {
					return fmt.Errorf("sanitize: %s: no trace", in)
				}
				spec, err := parseSecretTimes(secrets)
				if err != nil {
					return fmt.Errorf("sanitize: --secrets: %w", err)
				}
				opt := sanitize.Options{Prior: pr, Epsilon: eps, Lambda: lambda, Radius: radius, Secrets: spec, Delta: delta, Source: env.Source()}
				if origin != "" {
					p, err := parseLatLon(origin)
					if err != nil {
						return fmt.Errorf("sanitize: --origin: %w", err)
					}
					o := geo.Point{Lat: p.Lat, Lon: p.Lon}
					opt.Origin = &o
				}
				bar := env.Progress(len(traces)*4, "sanitize")
				opt.Progress = func(string) { bar.Add(1) }
				var outs []*trace.Trace
				var certs []*sanitize.Certificate
				for i, tr := range traces {
					o, c, err := sanitize.Trace(tr, opt)
					if err != nil {
						return fmt.Errorf("%s: trace %d (%s): %w", in, i+1, tr.Name, err)
					}
					bar.Add(1)
					outs, certs = append(outs, o), append(certs, c)
				}
				bar.Finish()
				if certFile == "" {
					certFile = out + ".cert.json"
				}
				if err := trace.WriteFile(out, outs, inFmt); err != nil {
					return fmt.Errorf("sanitize: %w", err)
				}
				var certOut any = certs[0]
				if len(certs) > 1 {
					fc := fileCertificate{Version: sanitize.CertificateVersion, Method: certs[0].Method, Lambda: lambda, RadiusM: radius, Traces: certs,
						Note: "each trace is designed and certified on its own; traces of one person that overlap or adjoin in time compose (cip-math.md section 5)"}
					for _, c := range certs {
						fc.EpsilonMax = max(fc.EpsilonMax, c.EpsilonMax)
						fc.Secrets = append(fc.Secrets, c.Secrets...)
						if c.Method != fc.Method {
							fc.Method = "mixed"
						}
					}
					certOut = fc
				}
				if err := cli.WriteJSONFile(certFile, certOut); err != nil {
					return fmt.Errorf("sanitize: %w", err)
				}
				return env.Emit(certOut, func(w io.Writer) error {
					for _, c := range certs {
						fmt.Fprintf(w, "%s %s: %d points, %d secrets, method %s\n", c.UID, c.Name, c.Points, len(c.Secrets), c.Method)
						fmt.Fprintf(w, "  certified epsilon %.4g (target %.4g) at lambda %g, r = %g m; prior-posterior gap %.4g at delta %g\n",
							c.EpsilonMax, c.EpsilonTarget, c.Lambda, c.RadiusM, c.GapMax, c.Delta)
						fmt.Fprintf(w, "  noise: %.4g m^2 per dimension, RMS displacement %.1f m; randomness %s; %.2f s\n",
							c.NoiseBudgetM2, c.RMSNoiseM, c.Randomness, c.Seconds)
					}
					_, err := fmt.Fprintf(w, "wrote %s and %s\n", out, certFile)
					return err
				})
			},
		}
		f := cmd.Flags()
		f.StringVar(&in, "in", "", "input trace (CSV, GeoJSON, GPX or PLT)")
		f.StringVar(&out, "out", "", "output trace, written in the input format")
		f.StringVar(&priorFile, "prior", "", "prior file (tracepriv fit writes one)")
		f.Float64Var(&eps, "epsilon", 0, "target epsilon for every secret")
		f.Float64Var(&lambda, "lambda", 0, "Rényi order lambda > 1")
		f.Float64Var(&radius, "radius", 0, "radius r in metres within which secret locations are indistinguishable")
		f.StringVar(&secrets, "secrets", "all", "all, a comma-separated list of times (; joins a compound secret), or a file of them")
		f.StringVar(&certFile, "certificate", "", "certificate file (default OUT.cert.json)")
		f.StringVar(&origin, "origin", "", "public origin LAT,LON of the tangent plane (default: centre of the 0.1° cell of the first point)")
		f.Float64Var(&delta, "delta", 1e-5, "delta of the prior-posterior gap stated in the certificate")
		f.BoolVar(&lenient, "lenient", false, "skip malformed input rows (reported) instead of failing")
		return cmd
	})
}

// parseSecretTimes reads --secrets: "all" (nil), a list, or a file.
func parseSecretTimes(v string) ([][]time.Time, error) {
	if v == "all" {
		return nil, nil
	}
	if st, err := os.Stat(v); err == nil && !st.IsDir() {
		fh, err := os.Open(v)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		var out [][]time.Time
		sc := bufio.NewScanner(fh)
		for line := 1; sc.Scan(); line++ {
			s := strings.TrimSpace(sc.Text())
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			sec, err := parseSecretItem(s)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", v, line, err)
			}
			out = append(out, sec)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", v, err)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: no secrets", v)
		}
		return out, nil
	}
	var out [][]time.Time
	for _, item := range strings.Split(v, ",") {
		sec, err := parseSecretItem(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		out = append(out, sec)
	}
	return out, nil
}

// parseSecretItem reads "T" or "T1;T2;..." with T an RFC 3339 time or Unix
// seconds (";", because RFC 3339 offsets contain "+").
func parseSecretItem(s string) ([]time.Time, error) {
	var out []time.Time
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if t, err := time.Parse(time.RFC3339Nano, part); err == nil {
			out = append(out, t)
			continue
		}
		if u, err := strconv.ParseFloat(part, 64); err == nil {
			sec := int64(u)
			out = append(out, time.Unix(sec, int64((u-float64(sec))*1e9)).UTC())
			continue
		}
		return nil, fmt.Errorf("%q is neither an RFC 3339 time nor Unix seconds", part)
	}
	if len(out) == 0 {
		return nil, errors.New("empty secret")
	}
	return out, nil
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// Demo privacy target: Rényi order 2, secrets indistinguishable within
// 100 m, epsilon 1 for every point. The noise this costs is in the
// certificate; see the README for how to choose them.
const (
	demoEpsilon = 1.0
	demoLambda  = 2.0
	demoRadius  = 100.0
)

func init() { register(newDemoCmd) }

// demoCmd is "tracepriv demo": the main job on the bundled sample trace.
type demoCmd struct {
	env *cli.Env
	out string
}

func newDemoCmd(env *cli.Env) *cobra.Command {
	c := &demoCmd{env: env}
	long, example := helpMeaning("demo", sanitize.MeaningOf(1, 2, 100).Text)
	cmd := &cobra.Command{
		Use:     "demo [--out DIR]",
		Short:   "Run the main job on the bundled sample trace",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	cmd.Flags().StringVarP(&c.out, "out", "o", "demo-output", "directory for the results")
	return cmd
}

func (c *demoCmd) run() error {
	env, out := c.env, c.out
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{Name: sample.Name, UID: sample.UID})
	if err != nil {
		return err
	}
	t, err := r.Next()
	if err != nil {
		return err
	}
	var files []string
	for _, f := range []trace.Format{trace.PLT, trace.CSV, trace.GeoJSON, trace.GPX} {
		path := filepath.Join(out, "sample"+extension(f))
		if err := trace.WriteFile(path, []*trace.Trace{t}, f); err != nil {
			return err
		}
		files = append(files, path)
	}
	prior, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		return fmt.Errorf("demo: bundled prior: %w", err)
	}
	bar := env.Progress(4, "sanitise")
	san, cert, err := sanitize.Trace(t, sanitize.Options{
		Prior: prior, Epsilon: demoEpsilon, Lambda: demoLambda, Radius: demoRadius,
		Source: env.Source(), Progress: func(string) { bar.Add(1) },
	})
	bar.Finish()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	sanPath := filepath.Join(out, "sanitised.plt")
	certPath := sanitize.CertificatePath(sanPath) // where attack looks for it
	rel := sanitize.Files{Traces: sanPath, Format: trace.PLT, Certificate: certPath}
	if err := rel.Write([]*trace.Trace{t}, []*trace.Trace{san}, cert); err != nil {
		return err
	}
	files = append(files, sanPath, certPath)
	maps, err := demoMap(t, san, cert, out)
	if err != nil {
		return err
	}
	files = append(files, maps...)
	res := map[string]any{"summary": trace.Summarize(t), "certificate": cert, "files": files}
	return env.Emit(res, func(w io.Writer) error {
		fmt.Fprintf(w, "sample trace: %d points over %s\n", t.Len(), t.Duration())
		pc := cert.Persons[0]
		fmt.Fprintf(w, "sanitised with the %s design against the prior family %v: certified epsilon %.4g (%s) at lambda %g, r = %g m (%d secrets) for %s; RMS noise %.0f m; randomness %s\n",
			cert.Design, cert.PriorFamily, cert.EpsilonMax, strings.ReplaceAll(cert.EpsilonKind, "_", " "), cert.Lambda, cert.RadiusM, pc.Secrets.Count, cert.CoveredClasses(), pc.RMSNoiseM, cert.Randomness)
		fmt.Fprintf(w, "what it means: %s\n", cert.Meaning.Text)
		if !cert.Private {
			fmt.Fprintln(w, "NOT PRIVATE: the noise came from a seeded source; anyone with the seed can remove it")
		}
		for _, f := range files {
			fmt.Fprintf(w, "wrote %s\n", f)
		}
		return nil
	})
}

// demoMap draws the original and the sanitised trace (SVG and PNG) in
// out and returns the files.
func demoMap(t, san *trace.Trace, cert *sanitize.Certificate, out string) ([]string, error) {
	var files []string
	// The legend does not wrap, so the family the epsilon holds
	// against, and NOT PRIVATE for a seeded run, go in the
	// title, which does.
	label := strings.Replace(cert.Legend(), " against "+cert.FamilyLine(), "", 1)
	title := "CIP sanitisation: every point, place and route a secret, against " + cert.FamilyLine()
	if sp := cert.ShorterPlaces(); sp != "" {
		label = strings.Replace(label, " "+sp, "", 1)
		title += "; places longer than a member's lengthscale " + strings.Trim(strings.TrimPrefix(sp, "(longer: "), "()")
	}
	if !cert.Private {
		label = strings.Replace(label, "; NOT PRIVATE", "", 1)
		title = "NOT PRIVATE (seeded noise): " + title
	}
	p, err := viz.Map([]viz.Series{
		{Label: "original (synthetic person " + sample.UID + ")", Trace: t, Points: true, Role: viz.RoleOriginal},
		{Label: label, Trace: san, Points: true, Role: viz.RoleReleased},
	}, viz.MapOptions{Title: title})
	if err != nil {
		return nil, err
	}
	for _, ext := range []string{".svg", ".png"} {
		mapPath := filepath.Join(out, "map"+ext)
		if err := viz.Save(p, mapPath, 0, 0); err != nil {
			return nil, err
		}
		files = append(files, mapPath)
	}
	return files, nil
}

func extension(f trace.Format) string {
	switch f {
	case trace.PLT:
		return ".plt"
	case trace.CSV:
		return ".csv"
	case trace.GeoJSON:
		return ".geojson"
	default:
		return ".gpx"
	}
}

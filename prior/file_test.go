package prior

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

func TestPriorRoundTripAndErrors(t *testing.T) {
	p := &Prior{Version: 2, Kernel: "periodic", Variance: 4, Lengthscale: 2, Period: 60, LengthscaleMin: 2, LengthscaleMax: 2,
		Fit: &FitRecord{Corpus: "c", Windows: 3, Quantile: 0.75, LEff: 2, SamplingPeriod: 1}}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	os.WriteFile(path, buf.Bytes(), 0o644)
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := back.KernelFunc()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := k.Eval(0, 30), (gp.Periodic{Variance: 4, Lengthscale: 2, Period: 60}).Eval(0, 30); got != want {
		t.Errorf("kernel %v, want %v", got, want)
	}
	if f := back.Family(); !f.Single() || f.LengthscaleMin != 2 || f.Period != 60 {
		t.Errorf("family of a single-lengthscale prior: %+v", f)
	}
	// A version-1 file states no family: refused (in code, it is the
	// family of its one lengthscale).
	os.WriteFile(path, []byte(`{"version":1,"kernel":"rbf","variance_m2":1,"lengthscale_s":7}`), 0o644)
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "states no prior family") {
		t.Errorf("version 1 file: %v, want a refusal", err)
	}
	if v1 := (&Prior{Version: 1, Kernel: "rbf", Variance: 1, Lengthscale: 7}); v1.Family() != (Family{Kernel: "rbf", LengthscaleMin: 7, LengthscaleMax: 7, Variance: 1}) {
		t.Errorf("version 1 family: %+v", v1.Family())
	}
	// Version 3: a family of several kernels.
	os.WriteFile(path, []byte(`{"version":3,"kernel":"matern32","variance_m2":400,"lengthscale_s":300,
		"family":{"kernels":[{"kernel":"matern32","lengthscale_min_s":20,"lengthscale_max_s":3600},{"kernel":"rbf","lengthscale_min_s":8,"lengthscale_max_s":60,"variance_min_m2":100}]}}`), 0o644)
	v3, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fs := v3.Families(); len(fs.Kernels) != 2 || fs.Kernels[0].Variance != 400 || fs.Kernels[1].Variance != 100 || v3.Family().Kernel != "matern32" || fs.Single() {
		t.Errorf("version 3 family %+v, nominal %+v", fs, v3.Family())
	}
	if lo, hi := v3.Families().LengthscaleRange(); lo != 8 || hi != 3600 {
		t.Errorf("range [%v, %v]", lo, hi)
	}
	for _, c := range []struct{ json, want string }{
		{`{"version":5,"kernel":"rbf","variance_m2":1,"lengthscale_s":1}`, `"version"`},
		// Version 4 publishes no fingerprints of its corpus; version 3
		// has no corpus index.
		{`{"version":4,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"family":{"kernels":[{"kernel":"rbf","lengthscale_min_s":1,"lengthscale_max_s":2}]},"fit":{"corpus":"c","windows":1,"quantile":0.95,"l_eff":1,"sampling_period_s":1,"l_eff_quartiles":[1,1,1],"method":"m","fingerprints":["t:00"]}}`, `"fit.fingerprints"`},
		{`{"version":3,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"family":{"kernels":[{"kernel":"rbf","lengthscale_min_s":1,"lengthscale_max_s":2}]},"fit":{"corpus":"c","windows":1,"quantile":0.95,"l_eff":1,"sampling_period_s":1,"l_eff_quartiles":[1,1,1],"method":"m","corpus_indexed":true}}`, `"fit.corpus_indexed"`},
		{`{"version":3,"kernel":"rbf","variance_m2":1,"lengthscale_s":1}`, `"family"`},
		{`{"version":3,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"family":{"kernels":[{"kernel":"matern32","lengthscale_min_s":1,"lengthscale_max_s":2}]}}`, `nominal kernel`},
		{`{"version":3,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"family":{"kernels":[{"kernel":"rbf","lengthscale_min_s":1,"lengthscale_max_s":2},{"kernel":"rbf","lengthscale_min_s":1,"lengthscale_max_s":3}]}}`, `listed twice`},
		{`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"family":{"kernels":[{"kernel":"rbf","lengthscale_min_s":1,"lengthscale_max_s":2}]}}`, `needs version 3`},
		{`{"version":1,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"lengthscale_min_s":1,"lengthscale_max_s":2}`, `"version"`},
		{`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"lengthscale_min_s":1}`, `"lengthscale_max_s"`},
		{`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"lengthscale_min_s":2,"lengthscale_max_s":3}`, `outside the family`},
		{`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":2,"lengthscale_min_s":3,"lengthscale_max_s":1}`, `"lengthscale_min_s"`},
		{`{"version":2,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"origin":{"lat":91,"lon":0}}`, `"origin"`},
		{`{"version":1,"kernel":"cosine","variance_m2":1,"lengthscale_s":1}`, `"kernel"`},
		{`{"version":1,"kernel":"periodic","variance_m2":1,"lengthscale_s":1}`, `"period_s"`},
		{`{"version":1,"kernel":"rbf","variance_m2":0,"lengthscale_s":1}`, `"variance_m2"`},
		{`{"version":1,"kernel":"rbf","variance_m2":1,"lengthscale_s":-1}`, `"lengthscale_s"`},
		{`{"version":1,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,"lengthscale":3}`, `unknown field "lengthscale"`},
	} {
		t.Run(c.want, func(t *testing.T) {
			os.WriteFile(path, []byte(c.json), 0o644)
			_, err := ReadFile(path)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("%s: error %v, want it to name the file", c.json, err)
			}
			// A quoted want is the field a *param.Error names (read from
			// the error's value, not its text); any other is wording.
			if field, ok := strings.CutPrefix(c.want, `"`); ok {
				var pe *param.Error
				if !errors.As(err, &pe) || pe.Name != strings.TrimSuffix(field, `"`) {
					t.Errorf("%s: error %v, want a *param.Error naming %s", c.json, err, c.want)
				}
			} else if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want it to mention %s", c.json, err, c.want)
			}
		})
	}
}

// TestOriginOldForm replays a prior file written when its origin was
// geo.Origin ({"lat", "lon", "note"}, no "source"): it reads into
// geo.Origin, and writing it back adds no field, so its digest (which a
// private corpus index records) is the one the old code computed. With
// "source" always written, the written file and its digest would change.
func TestOriginOldForm(t *testing.T) {
	old := `{"version":4,"kernel":"rbf","variance_m2":1,"lengthscale_s":1,` +
		`"family":{"kernels":[{"kernel":"rbf","lengthscale_min_s":1,"lengthscale_max_s":2,"variance_min_m2":0}]},` +
		`"origin":{"lat":39.98,"lon":116.32,"note":"centre of corpus"}}`
	p, err := Read(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Origin; o == nil || o.Lat != 39.98 || o.Lon != 116.32 || o.Note != "centre of corpus" || o.Source != "" {
		t.Fatalf("origin %+v", p.Origin)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "source") {
		t.Errorf("writing an old prior added a source:\n%s", buf.String())
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if compact.String() != old {
		t.Errorf("written back:\n%s\nwant the old file:\n%s", compact.String(), old)
	}
}

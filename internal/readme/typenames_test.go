package readme

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sharedTypeNames are the exported type names defined in more than one
// package, each judged to name a different concept in each (issue 35: no
// type name defined twice across packages for one concept), so that the
// package qualifies the name: package -> why it is not the others'. A name
// defined in another package, or a package added to a name, fails
// TestTypeNamesOneConcept until it is judged here (or merged into one
// type, in the package that owns the concept).
var sharedTypeNames = map[string]map[string]string{
	"Certificate": {"geoind": "a geo-indistinguishable release of whole traces", "sanitize": "a CIP release", "trajdb": "a synthetic trajectory database"},
	"Charge":      {"budget": "a ledger entry", "server/api": "the wire form of a charge request and answer"},
	"Comparison":  {"prior": "kernels compared by a fit", "trajdb": "mechanisms compared by utility"},
	"Config":      {"geoind": "the predictive mechanism's configuration", "internal/corpus": "the corpus runner's configuration"},
	"Error":       {"internal/matfile": "a malformed matrix file", "param": "a bad parameter", "server/api": "the wire form of an error"},
	"Evaluator":   {"cip": "the exact loss of noise designs", "trajdb": "utility metrics of a synthetic database"},
	"File":        {"budget": "the ledger file", "internal/atomicfile": "one file of a group written together", "internal/sample/synth": "a generated sample file"},
	"FileError":   {"prior": "a bad field of a prior file", "trace": "a trace file that cannot be read"},
	"Files":       {"geoind": "a geoind release and its certificate, written together", "sanitize": "a CIP release and its certificate, written together"},
	"FitOptions":  {"gp": "a GP hyper-parameter fit", "pipeline": "the Beam prior-fitting job"},
	"FitResult":   {"gp": "a GP hyper-parameter fit", "pipeline": "the Beam prior-fitting job"},
	"Gaussian":    {"accountant": "a Gaussian event's privacy loss", "bdp": "Bayesian DP's Gaussian model", "noise": "the Gaussian sampler"},
	"Laplace":     {"accountant": "a Laplace event's privacy loss", "noise": "the Laplace sampler"},
	"Linear":      {"geoind": "the linear predictor", "sdp": "a linear constraint"},
	"Manifest":    {"sanitize": "a corpus release's index", "server/wasm": "the built WebAssembly module's digest"},
	"MapOptions":  {"trajdb": "the grid a trajectory database is mapped to", "viz": "a drawn map"},
	"Mechanism":   {"budget": "the kind of a charge", "geoind": "a geoind noise mechanism", "risk": "a mechanism RAD bounds", "trajdb": "a synthetic-database mechanism"},
	"Mode":        {"geoind": "how a predictive step used its test", "prior": "which of the two fitting modes a fit runs"},
	"NoiseAuditOptions": {"geoind": "the audit of planar Laplace and the predictive mechanism", "sanitize": "the audit of a CIP release's noise",
		"trajdb": "the audit of a synthetic database's counts"},
	"NoiseAuditReport": {"geoind": "the audit of planar Laplace and the predictive mechanism", "sanitize": "the audit of a CIP release's noise",
		"trajdb": "the audit of a synthetic database's counts"},
	"Options": {"prior": "a prior fit", "sanitize": "a CIP release", "server": "the service", "server/internal/store": "the SQL store",
		"server/web": "the web page"},
	"PaperOptions":  {"cip": "the paper's SDPs", "prior": "the paper's single-kernel fit"},
	"Params":        {"geoind": "the predictive mechanism's parameters", "risk": "a mechanism's RAD parameters"},
	"Person":        {"internal/trajdata": "a synthetic database's person", "server/api": "the wire form of a person's budget"},
	"PersonRelease": {"geoind": "a person's geoind release", "pipeline": "a person's CIP release by the Beam transform"},
	"Plan":          {"device": "the bindable form of a geoind plan", "geoind": "a geoind release plan"},
	"PlanarLaplace": {"geoind": "the gridded geoind mechanism", "noise": "the planar Laplace distribution"},
	"Point":         {"geo": "a WGS84 position", "trace": "a timestamped fix"},
	"RefusedError":  {"budget": "a budget refusal", "internal/cli": "a command's refusal"},
	"Report": {"accountant": "a composition", "attack": "an attack", "cip": "a noise's assessed loss", "geoind": "a geoind run",
		"prior": "a fit", "trace": "what reading skipped"},
	"Result":  {"internal/scaletest": "a noise test", "sdp": "an SDP solve"},
	"Series":  {"gp": "a time series", "viz": "a drawn line"},
	"Session": {"device": "the bindable form of a geoind session", "geoind": "a geoind session"},
	"Stats":   {"geoind": "a run's statistics", "trace": "a sample's statistics"},
	"Step":    {"geoind": "a step of a predictive run", "trace": "a step between two fixes"},
	"Store": {"budget": "where an Admission keeps accounts: a ledger file, or the service's database through server.LedgerDB",
		"server/internal/store": "the service's SQL store"},
}

// TestTypeNamesOneConcept: an exported type name defined in several
// packages (of both modules, tests and generated wasm output aside) is one
// that sharedTypeNames judged to name a different concept in each. It
// fails on a concept defined twice, such as the corpus manifest that
// internal/corpus and sanitize each defined and kept equal by a JSON round
// trip.
func TestTypeNamesOneConcept(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	defined := map[string][]string{} // type name -> packages
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "dist" || strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if buildIgnored(f) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				// An alias counts: it is a second name for the type.
				if name := s.(*ast.TypeSpec).Name.Name; ast.IsExported(name) && !slices.Contains(defined[name], rel) {
					defined[name] = append(defined[name], rel)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, pkgs := range defined {
		if len(pkgs) < 2 {
			continue
		}
		for _, p := range pkgs {
			if _, ok := sharedTypeNames[name][p]; !ok {
				t.Errorf("type %s is defined in %s: one concept, one type, in the package that owns it (or, if each names another concept, say so in sharedTypeNames)",
					name, strings.Join(pkgs, ", "))
				break
			}
		}
	}
}

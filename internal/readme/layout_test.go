package readme

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/tracepriv/tracepriv"

// goPackage is one directory of Go code in the tree: its import path
// relative to the module, its name, its non-test files' imports of the
// module, its package comment and its test files.
type goPackage struct {
	rel     string
	name    string
	imports map[string]string // imported rel path -> first importing file
	doc     string
	tests   []string
}

// treePackages parses every package of the repository (the nested pipeline
// module included, which imports its parent by the same path), skipping
// testdata and hidden directories.
func treePackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	root := filepath.Join("..", "..")
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "pipeline/." {
			rel = "pipeline"
		}
		p := pkgs[rel]
		if p == nil {
			p = &goPackage{rel: rel, imports: map[string]string{}}
			pkgs[rel] = p
		}
		if strings.HasSuffix(path, "_test.go") {
			p.tests = append(p.tests, path)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			return err
		}
		if tags := buildIgnored(f); tags {
			return nil
		}
		p.name = f.Name.Name
		if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package ") {
			p.doc = f.Doc.Text()
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip == modulePath {
				ip = modulePath + "/."
			}
			if r, ok := strings.CutPrefix(ip, modulePath+"/"); ok {
				if _, seen := p.imports[r]; !seen {
					p.imports[r] = path
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, p := range pkgs {
		if p.name == "" { // test files only
			delete(pkgs, rel)
		}
	}
	return pkgs
}

// buildIgnored reports a file excluded from every build ("//go:build
// ignore", as generators are).
func buildIgnored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// reproPackage, the reproductions of the papers, is imported by
// reproImporter only (CONTRIBUTING.md, "Where things live").
const (
	reproPackage  = "repro"
	reproImporter = "cmd/tracepriv"
)

// layerLine is a line of CONTRIBUTING.md's import order.
var layerLine = regexp.MustCompile("^layer ([0-9]+): (.+)$")

// TestImportOrder checks that every package imports only packages of a
// lower layer of CONTRIBUTING.md's import order, and that the order names
// every package of the tree: the order in the guide is the one the code
// keeps, and a new package has to take its place in it.
func TestImportOrder(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]int{}
	for _, l := range strings.Split(string(guide), "\n") {
		m := layerLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, name := range strings.Split(m[2], ",") {
			name = strings.Trim(strings.TrimSpace(name), "`")
			if _, dup := layer[name]; dup {
				t.Errorf("CONTRIBUTING.md names %s in two layers", name)
			}
			layer[name] = n
		}
	}
	if len(layer) < 10 {
		t.Fatalf("CONTRIBUTING.md: found %d packages in lines \"layer N: a, b\"; the import order is missing", len(layer))
	}
	pkgs := treePackages(t)
	problems, arrows, up := importProblems(pkgs, layer)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d packages, %d imports between them, %d running back up", len(pkgs), arrows, up)
	for name := range layer {
		if _, ok := pkgs[name]; !ok {
			t.Errorf("CONTRIBUTING.md's import order names %s, which is not a package of the tree", name)
		}
	}
}

// importProblems checks pkgs against the layers: every package in a
// layer, every import to a lower layer, and the reproductions imported by
// reproImporter only. It returns what is wrong, the number of imports
// between packages of the tree and the number of them that run back up.
func importProblems(pkgs map[string]*goPackage, layer map[string]int) (problems []string, arrows, up int) {
	var rels []string
	for rel := range pkgs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		p := pkgs[rel]
		l, ok := layer[rel]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is in no layer of CONTRIBUTING.md's import order: add it to the lowest layer above everything it imports", rel))
			continue
		}
		imps := make([]string, 0, len(p.imports))
		for imp := range p.imports {
			imps = append(imps, imp)
		}
		sort.Strings(imps)
		for _, imp := range imps {
			file := p.imports[imp]
			arrows++
			li, ok := layer[imp]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s imports %s, which is in no layer of CONTRIBUTING.md", file, imp))
			case li >= l:
				up++
				problems = append(problems, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports run downwards only; move the concept it needs into a lower package", file, l, imp, li))
			}
			// The reproductions are experiments in front of the library,
			// not part of it: only the command runs them.
			if imp == reproPackage && rel != reproImporter {
				problems = append(problems, fmt.Sprintf("%s imports %s: only %s does (the reproductions are a layer above the library; move what you need from it into the package that owns the concept)", file, imp, reproImporter))
			}
		}
	}
	return problems, arrows, up
}

// TestImportProblemsControls is the negative control of TestImportOrder's
// check: on a made-up tree it finds an import back up, a package in no
// layer, and a library package importing the reproductions, and nothing
// on the tree without them.
func TestImportProblemsControls(t *testing.T) {
	pkg := func(rel string, imports ...string) *goPackage {
		p := &goPackage{rel: rel, imports: map[string]string{}}
		for _, imp := range imports {
			p.imports[imp] = rel + "/x.go"
		}
		return p
	}
	layer := map[string]int{"internal/numeric": 0, "geo": 1, "sanitize": 2, "repro": 3, "server": 3, "cmd/tracepriv": 4}
	good := map[string]*goPackage{
		"geo": pkg("geo", "internal/numeric"), "internal/numeric": pkg("internal/numeric"), "sanitize": pkg("sanitize", "geo"),
		"repro": pkg("repro", "sanitize"), "server": pkg("server", "sanitize"), "cmd/tracepriv": pkg("cmd/tracepriv", "repro", "server"),
	}
	if problems, arrows, up := importProblems(good, layer); len(problems) != 0 || arrows != 6 || up != 0 {
		t.Fatalf("a tree that keeps the order: %d imports, %d up, %q", arrows, up, problems)
	}
	for _, tc := range []struct {
		name, rel string
		p         *goPackage
		up        int
		says      string
	}{
		// The reproductions drawn in internal/'s room, as before issue 35.
		{"back up", "internal/numeric", pkg("internal/numeric", "sanitize"), 1, "imports run downwards only"},
		{"same layer", "server", pkg("server", "repro"), 1, "only cmd/tracepriv does"},
		{"no layer", "internal/new", pkg("internal/new", "geo"), 0, "in no layer"},
	} {
		tree := map[string]*goPackage{}
		for k, v := range good {
			tree[k] = v
		}
		tree[tc.rel] = tc.p
		problems, _, up := importProblems(tree, layer)
		if up != tc.up || !strings.Contains(strings.Join(problems, "\n"), tc.says) {
			t.Errorf("%s: %d up, %q; want %d up and %q", tc.name, up, problems, tc.up, tc.says)
		}
	}
	// A library package in a layer above the reproductions still may not
	// import them.
	layer2 := map[string]int{"internal/numeric": 0, "geo": 1, "sanitize": 2, "repro": 3, "server": 4, "cmd/tracepriv": 5}
	tree := map[string]*goPackage{}
	for k, v := range good {
		tree[k] = v
	}
	tree["server"] = pkg("server", "repro")
	if problems, _, up := importProblems(tree, layer2); up != 0 || len(problems) != 1 || !strings.Contains(problems[0], "only cmd/tracepriv does") {
		t.Errorf("server above repro importing it: %d up, %q", up, problems)
	}
}

// TestPackageDocs checks what a reader of go doc meets first: every public
// package's comment starts with a paragraph and shows code (an indented
// block, as gonum's mat/doc.go does), and every file with Examples is in
// the external test package, so that godoc shows qualified names.
func TestPackageDocs(t *testing.T) {
	for rel, p := range treePackages(t) {
		public := p.name != "main" && !strings.Contains("/"+rel+"/", "/internal/")
		if public {
			paras := strings.SplitN(p.doc, "\n\n", 2)
			switch {
			case p.doc == "":
				t.Errorf("%s: no package comment (\"Package %s ...\" in doc.go)", rel, p.name)
			case len(strings.Fields(paras[0])) < 12:
				t.Errorf("%s: the package comment's first paragraph has fewer than 12 words: say what the package is for", rel)
			case !hasCodeBlock(p.doc):
				t.Errorf("%s: the package comment shows no code: add an indented example after the first paragraph", rel)
			}
		}
		for _, file := range p.tests {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f.Name.Name, "_test") || p.name == "main" {
				continue
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
					t.Errorf("%s: %s is in package %s; Examples go in package %s_test", file, fn.Name.Name, f.Name.Name, p.name)
				}
			}
		}
	}
}

// hasCodeBlock reports an indented line (go doc's code block) in a
// package comment's text.
func hasCodeBlock(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "\t") && strings.TrimSpace(l) != "" {
			return true
		}
	}
	return false
}

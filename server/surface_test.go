package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// parseDir parses the non-test Go files of the package in dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, n), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	return files
}

// unexportedIn returns the unexported type names a type expression uses
// (predeclared types such as int or error are fine; pkg.Name is another
// package's exported name).
func unexportedIn(e ast.Expr) []string {
	fields := func(l *ast.FieldList) (out []string) {
		if l != nil {
			for _, f := range l.List {
				out = append(out, unexportedIn(f.Type)...)
			}
		}
		return out
	}
	switch x := e.(type) {
	case *ast.Ident:
		if !x.IsExported() && !predeclared[x.Name] {
			return []string{x.Name}
		}
	case *ast.StarExpr:
		return unexportedIn(x.X)
	case *ast.ParenExpr:
		return unexportedIn(x.X)
	case *ast.ArrayType:
		return unexportedIn(x.Elt)
	case *ast.Ellipsis:
		return unexportedIn(x.Elt)
	case *ast.ChanType:
		return unexportedIn(x.Value)
	case *ast.MapType:
		return append(unexportedIn(x.Key), unexportedIn(x.Value)...)
	case *ast.IndexExpr:
		return append(unexportedIn(x.X), unexportedIn(x.Index)...)
	case *ast.FuncType:
		return append(fields(x.Params), fields(x.Results)...)
	case *ast.StructType:
		return fields(x.Fields)
	case *ast.InterfaceType:
		return fields(x.Methods)
	}
	return nil
}

var predeclared = map[string]bool{}

func init() {
	for _, n := range strings.Fields("any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr") {
		predeclared[n] = true
	}
}

// TestNoUnexportedTypesInAPI: no exported field of an exported type of
// package server or server/api, and no parameter or result of an
// exported function or method, has a type a user of the package cannot
// name (as LedgerResponse.Config once had); the surface of server stays
// what embedding needs.
func TestNoUnexportedTypesInAPI(t *testing.T) {
	t.Parallel()
	var exported []string
	for _, dir := range []string{".", "api"} {
		for _, f := range parseDir(t, dir) {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						switch sp := sp.(type) {
						case *ast.TypeSpec:
							if !sp.Name.IsExported() {
								continue
							}
							if dir == "." {
								exported = append(exported, sp.Name.Name)
							}
							st, ok := sp.Type.(*ast.StructType)
							if !ok {
								continue
							}
							for _, fld := range st.Fields.List {
								public := len(fld.Names) == 0 // embedded
								for _, n := range fld.Names {
									public = public || n.IsExported()
								}
								if u := unexportedIn(fld.Type); public && len(u) > 0 {
									t.Errorf("%s: a field of %s has the unexported type %v", dir, sp.Name.Name, u)
								}
							}
						case *ast.ValueSpec:
							for _, n := range sp.Names {
								if n.IsExported() && dir == "." {
									exported = append(exported, n.Name)
								}
							}
						}
					}
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv != nil {
						if !ast.IsExported(recvName(d.Recv.List[0].Type)) {
							continue
						}
					} else if dir == "." {
						exported = append(exported, d.Name.Name)
					}
					if u := unexportedIn(d.Type); len(u) > 0 {
						t.Errorf("%s: %s uses the unexported types %v", dir, d.Name.Name, u)
					}
				}
			}
		}
	}
	sort.Strings(exported)
	// The bound (26): what an embedding program needs; the wire
	// types are in package api.
	if len(exported) > 35 {
		t.Errorf("package server exports %d names, more than 35: %v", len(exported), exported)
	}
	t.Logf("package server exports %d names: %v", len(exported), exported)
}

// recvName is the type name of a method's receiver.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvName(x.X)
	}
	return ""
}

package device_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// plainTypes are the types gomobile binds in an exported signature (the
// numbers it maps, strings, byte slices, errors) plus the package's one
// opaque type; maps, interfaces, slices of anything but bytes and structs
// by value are not bound (gobind skips such a function without a word).
var plainTypes = map[string]bool{
	"string": true, "[]byte": true, "bool": true, "int": true, "int32": true, "int64": true,
	"float32": true, "float64": true, "error": true, "*Session": true, "*Plan": true, // opaque pointers
}

// TestPlainTypes checks that every exported function and method of the
// package has a signature gomobile can bind, and that exported structs have
// no exported fields (an app reaches data through methods and JSON). gobind
// on this package generates every function (checked by hand: Java
// device.Device and device.Session, with nothing skipped).
func TestPlainTypes(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	funcs := 0
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && !ast.IsExported(recvName(d.Recv.List[0].Type)) {
					continue
				}
				funcs++
				for _, l := range []*ast.FieldList{d.Type.Params, d.Type.Results} {
					if l == nil {
						continue
					}
					for _, fld := range l.List {
						if ty := types(fset, fld.Type); !plainTypes[ty] {
							t.Errorf("%s: %s uses %s, which gomobile does not bind: use numbers, strings, byte slices or JSON", fset.Position(d.Pos()), d.Name.Name, ty)
						}
					}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						t.Errorf("%s: exported type %s is not an opaque struct", fset.Position(ts.Pos()), ts.Name.Name)
						continue
					}
					for _, fld := range st.Fields.List {
						for _, name := range fld.Names {
							if name.IsExported() {
								t.Errorf("%s: %s.%s is an exported field", fset.Position(fld.Pos()), ts.Name.Name, name.Name)
							}
						}
					}
				}
			}
		}
	}
	if funcs < 8 {
		t.Errorf("found %d exported functions and methods, want the package's API (at least 8)", funcs)
	}
}

func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// types prints a type expression.
func types(fset *token.FileSet, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + types(fset, e.X)
	case *ast.ArrayType:
		if e.Len == nil {
			return "[]" + types(fset, e.Elt)
		}
	case *ast.SelectorExpr:
		return types(fset, e.X) + "." + e.Sel.Name
	case *ast.MapType:
		return "map[" + types(fset, e.Key) + "]" + types(fset, e.Value)
	}
	return fset.Position(e.Pos()).String() + ": a composite type"
}

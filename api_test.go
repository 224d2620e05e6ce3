package unfold_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// interfaceMethods are the method names of interfaces from outside the
// module that API types implement: a method of one of these names is
// supported as part of the type.
var interfaceMethods = []string{
	"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText", // encoding/json, encoding
	"String", "GoString", "Format", "Error", "Unwrap", "Is", "As", "LogValue", // fmt, errors, log/slog
	"Read", "Write", "Close", "Seek", "ReadAt", "WriteAt", // io
	"Name", "Create", "Mkdir", "MkdirAll", "Open", "OpenFile", "Remove", "RemoveAll",
	"Rename", "Stat", "Chmod", "Chown", "Chtimes", "LstatIfPossible", // afero.Fs
	"ServeHTTP", // net/http
}

// apiDecl is an exported declaration of an API package.
type apiDecl struct {
	node    ast.Node          // *ast.FuncDecl, *ast.TypeSpec or *ast.ValueSpec
	typ     string            // a constant's or variable's type in the package, if named
	imports map[string]string // the file's imports of API packages: name to dir
}

// TestExportedIsSupported checks that every exported name outside
// internal/ and the programs is supported API: used by an example (an
// Example function, or a program under examples/), by a test in another
// package (an external _test package counts), documented (linked from its
// package's doc comments as [Name] or [Type.Method], or named as pkg.Name
// in README.md or docs/), or part of what is: a type in the signature or
// fields of a supported name, a constant of a supported type, a method an
// interface asks for. What only this module uses belongs under internal/ or
// unexported.
func TestExportedIsSupported(t *testing.T) {
	fset := token.NewFileSet()
	type pkgInfo struct {
		path  string              // import path
		name  string              // package name
		decls map[string]*apiDecl // by "Name" or "Type.Method"
		docs  strings.Builder     // every comment in its non-test files
	}
	pkgs := map[string]*pkgInfo{} // by directory
	type file struct {
		dir  string
		f    *ast.File
		test bool
	}
	var files []file
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		files = append(files, file{dir, f, strings.HasSuffix(path, "_test.go")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	api := func(dir string) bool {
		return dir != "." && !strings.HasPrefix(dir, "internal/") && !strings.Contains(dir, "/internal/") &&
			!strings.HasPrefix(dir, "cmd/") && !strings.HasPrefix(dir, "examples/") && !strings.HasPrefix(dir, "bench/")
	}
	methodsAsked := map[string]bool{}
	for _, name := range interfaceMethods {
		methodsAsked[name] = true
	}
	for _, fl := range files {
		if fl.test || !api(fl.dir) || fl.f.Name.Name == "main" {
			continue
		}
		p := pkgs[fl.dir]
		if p == nil {
			p = &pkgInfo{path: module + "/" + fl.dir, name: fl.f.Name.Name, decls: map[string]*apiDecl{}}
			pkgs[fl.dir] = p
		}
	}
	byPath := map[string]string{}
	for dir, p := range pkgs {
		byPath[p.path] = dir
	}
	// importsOf returns a file's imports of API packages, by the name the
	// file uses.
	importsOf := func(f *ast.File) map[string]string {
		imported := map[string]string{}
		for _, imp := range f.Imports {
			dir, ok := byPath[strings.Trim(imp.Path.Value, `"`)]
			if !ok {
				continue
			}
			name := pkgs[dir].name
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imported[name] = dir
		}
		return imported
	}
	for _, fl := range files {
		if fl.test || !api(fl.dir) || fl.f.Name.Name == "main" {
			continue
		}
		p := pkgs[fl.dir]
		imported := importsOf(fl.f)
		for _, cg := range fl.f.Comments {
			p.docs.WriteString(cg.Text())
		}
		for _, decl := range fl.f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					p.decls[d.Name.Name] = &apiDecl{node: d, imports: imported}
				} else if recv := recvName(d.Recv.List[0].Type); ast.IsExported(recv) {
					p.decls[recv+"."+d.Name.Name] = &apiDecl{node: d, imports: imported}
				}
			case *ast.GenDecl:
				typ := "" // an iota block's type carries to the specs after it
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									methodsAsked[n.Name] = true
								}
							}
						}
						if s.Name.IsExported() {
							p.decls[s.Name.Name] = &apiDecl{node: s, imports: imported}
						}
					case *ast.ValueSpec:
						if id, ok := s.Type.(*ast.Ident); ok {
							typ = id.Name
						} else if s.Type != nil || len(s.Values) > 0 {
							typ = ""
						}
						for _, n := range s.Names {
							if n.IsExported() {
								p.decls[n.Name] = &apiDecl{node: s, typ: typ, imports: imported}
							}
						}
					}
				}
			}
		}
	}

	// supported[dir][name]; methods used through a value, of any type,
	// under supported[""].
	supported := map[string]map[string]bool{}
	mark := func(dir, name string) bool {
		if supported[dir] == nil {
			supported[dir] = map[string]bool{}
		}
		if supported[dir][name] {
			return false
		}
		supported[dir][name] = true
		return true
	}
	for _, fl := range files {
		example := strings.HasPrefix(fl.dir, "examples/")
		imported := importsOf(fl.f)
		external := fl.test && strings.HasSuffix(fl.f.Name.Name, "_test")
		ast.Inspect(fl.f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if !ok {
				return true
			}
			counts := example || external || (fl.test && strings.HasPrefix(fn.Name.Name, "Example"))
			if !counts {
				return false
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok {
					if dir, ok := imported[x.Name]; ok {
						mark(dir, sel.Sel.Name)
						return true
					}
				}
				mark("", sel.Sel.Name)
				return true
			})
			return false
		})
	}

	var docs strings.Builder
	for _, name := range []string{"README.md", "CONTRIBUTING.md"} {
		if data, err := os.ReadFile(name); err == nil {
			docs.Write(data)
		}
	}
	mds, _ := filepath.Glob("docs/*.md")
	for _, name := range mds {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(data)
	}
	for dir, p := range pkgs {
		for name := range p.decls {
			_, method, isMethod := strings.Cut(name, ".")
			if (isMethod && (supported[""][method] || methodsAsked[method])) ||
				linked(p.docs.String(), name) || strings.Contains(docs.String(), p.name+"."+name) {
				mark(dir, name)
			}
		}
	}

	// What a supported name is made of is supported: the types of its
	// signature and fields, and the constants of a supported type.
	for changed := true; changed; {
		changed = false
		for dir, p := range pkgs {
			for name, d := range p.decls {
				if !supported[dir][name] {
					if d.typ != "" && supported[dir][d.typ] {
						changed = mark(dir, name) || changed
					}
					continue
				}
				var x ast.Node
				switch n := d.node.(type) {
				case *ast.FuncDecl:
					x = n.Type
					if n.Recv != nil {
						changed = mark(dir, recvName(n.Recv.List[0].Type)) || changed
					}
				case *ast.TypeSpec:
					x = n.Type
				case *ast.ValueSpec:
					if n.Type != nil {
						x = n.Type
					}
				}
				if x == nil {
					continue
				}
				ast.Inspect(x, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.SelectorExpr:
						if id, ok := n.X.(*ast.Ident); ok {
							if to, ok := d.imports[id.Name]; ok {
								changed = mark(to, n.Sel.Name) || changed
							}
						}
						return false
					case *ast.Ident:
						if n.IsExported() && p.decls[n.Name] != nil {
							changed = mark(dir, n.Name) || changed
						}
					}
					return true
				})
			}
		}
	}

	var missing []string
	for dir, p := range pkgs {
		for name := range p.decls {
			if !supported[dir][name] {
				missing = append(missing, p.path+"."+name)
			}
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("%s is exported but no example, no test of another package and no doc uses it: use it in one, link it from its package doc ([Name]), or unexport it / move it under internal/", strings.TrimPrefix(m, module+"/"))
	}
}

// recvName returns the name of a method's receiver type.
func recvName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// linked reports whether doc comments link name as [Name] or [pkg.Name].
func linked(docs, name string) bool {
	return regexp.MustCompile(`\[(\*?[A-Za-z0-9_]+\.)?` + regexp.QuoteMeta(name) + `\]`).MatchString(docs)
}

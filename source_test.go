package synclab

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go source of the module on disk is embedded with the same content:
// a package at a depth the embed patterns miss would let its edits serve
// stale results.
func TestEmbedCoversEverySource(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || !hashed(filepath.ToSlash(p)) {
			return nil
		}
		n++
		disk, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if emb, err := sources.ReadFile(filepath.ToSlash(p)); err != nil || string(emb) != string(disk) {
			t.Errorf("%s: not embedded as it is on disk (%v); add its directory depth to the go:embed patterns", p, err)
		}
		return nil
	})
	if err != nil || n < 50 {
		t.Fatalf("walked %d sources: %v", n, err)
	}
}

// Every Go file is as gofmt writes it (tests and test data included), so a
// diff shows changes, not layout.
func TestSourcesAreGofmted(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		n++
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if out, err := format.Source(src); err != nil || !bytes.Equal(out, src) {
			t.Errorf("%s: not gofmt'ed (%v): run gofmt -w %s", p, err, p)
		}
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("walked %d Go files: %v", n, err)
	}
}

// Every exported name in the module's code (tests aside) has a doc comment,
// methods of unexported types aside: go doc shows only what is written.
func TestExportedNamesHaveDocs(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	err := fs.WalkDir(sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".go") || !hashed(name) {
			return err
		}
		src, err := sources.ReadFile(name)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return err
		}
		n++
		for _, pos := range undocumented(f) {
			t.Errorf("%s: exported %s has no doc comment", fset.Position(pos.Pos()), pos.Name)
		}
		return nil
	})
	if err != nil || n < 50 {
		t.Fatalf("parsed %d sources: %v", n, err)
	}
}

// undocumented lists f's exported top-level names and methods of exported
// types that have no doc comment (a trailing line comment documents a
// constant or variable, as go doc shows it).
func undocumented(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && d.Doc == nil && (d.Recv == nil || receiverExported(d.Recv)) {
				out = append(out, d.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
						out = append(out, s.Name)
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
							out = append(out, id)
						}
					}
				}
			}
		}
	}
	return out
}

func receiverExported(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if g, ok := t.(*ast.IndexExpr); ok { // a generic type's methods
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func TestUndocumented(t *testing.T) {
	src := `package p

// A is documented.
type A int

type B int

// F is documented.
func F() {}

func G() {}

func (A) M() {}

type c int

func (c) N() {}

const (
	// X is documented.
	X = 1
	Y = 2 // Y has a line comment.
	Z = 3
)

var v, W int
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range undocumented(f) {
		got = append(got, id.Name)
	}
	if want := "B G M Z W"; strings.Join(got, " ") != want {
		t.Errorf("undocumented = %v, want %s", got, want)
	}
}

func TestSourceHash(t *testing.T) {
	h := SourceHash()
	if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" || SourceHash() != h {
		t.Fatalf("SourceHash() = %q, want 32 stable hex digits", h)
	}
}

func TestHashedSkipsTests(t *testing.T) {
	for name, want := range map[string]bool{
		"labkit/runner.go":                     true,
		"go.mod":                               true,
		"data/reference/a.tsv":                 true,
		"labkit/runner_test.go":                false,
		"labkit/testdata/fuzz/FuzzDecode/seed": false,
		"testdata/x.go":                        false,
		"labkit/mytestdata/x.go":               true,
	} {
		if hashed(name) != want {
			t.Errorf("hashed(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestHasPackage(t *testing.T) {
	for path, want := range map[string]bool{
		"synclab":                 true,
		"synclab/labkit":          true,
		"synclab/labkit/cmd/lab":  true,
		"synclab/platforms/esp32": true,
		"synclab/data":            true,
		"synclab/data/reference":  false, // data, no Go files
		"synclab/nowhere":         false,
		"synclabx/labkit":         false,
		"synclab/labkit/":         false,
		"main":                    false,
		"example.com/synclab":     false,
	} {
		if got := HasPackage(path); got != want {
			t.Errorf("HasPackage(%q) = %v, want %v", path, got, want)
		}
	}
}

package synclab

import (
	"bytes"
	"go/format"
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

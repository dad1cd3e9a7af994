// Package synclab is the module's root. It embeds the module's sources, so
// that a program can name the code compiled into it: SourceHash hashes the
// files built into the running program, not the ones on disk now (which an
// old binary or a notebook kernel would otherwise claim as its own).
package synclab

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// sources holds the module's Go files at every package depth the module has
// (TestEmbedCoversEverySource checks that none is missed), go.mod, go.sum
// and the reference data the catalog compiles in. Patterns name files, not
// directories, so that stray build outputs are never embedded.
//
//go:embed go.mod go.sum *.go sim/*.go deploy/*.go platforms/*.go platforms/*/*.go
//go:embed labkit/*.go labkit/*/*.go labkit/*/*/*.go data/*.go data/reference/*.tsv
var sources embed.FS

// hashed reports whether an embedded file counts towards SourceHash: tests
// and test data do not (editing a test must not invalidate results).
func hashed(name string) bool {
	return !strings.HasSuffix(name, "_test.go") && !strings.Contains("/"+name+"/", "/testdata/")
}

var sourceHash = sync.OnceValue(func() string {
	h := sha256.New()
	err := fs.WalkDir(sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !hashed(name) {
			return err
		}
		b, err := sources.ReadFile(name)
		if err != nil {
			return err
		}
		h.Write([]byte(name + "\x00"))
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
		return nil
	})
	if err != nil {
		panic("synclab: embedded sources: " + err.Error()) // the files are compiled in
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
})

// SourceHash returns a hash (32 hex digits) of the module's sources compiled
// into this program: its Go files (tests excluded), go.mod, go.sum and the
// reference data. Any edit to them gives another hash.
func SourceHash() string { return sourceHash() }

// HasPackage reports whether importPath is one of the module's packages
// compiled with these sources ("synclab" or "synclab/DIR" with DIR holding
// Go files).
func HasPackage(importPath string) bool {
	dir, ok := strings.CutPrefix(importPath, "synclab")
	switch {
	case !ok:
		return false
	case dir == "":
		dir = "."
	default:
		if dir, ok = strings.CutPrefix(dir, "/"); !ok {
			return false
		}
	}
	entries, err := sources.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".go" && hashed(path.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}

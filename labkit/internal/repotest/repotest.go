// Package repotest copies the module into a temporary directory, for tests
// that build the lab command from edited sources (a new platform, a changed
// formula) without touching the repository.
package repotest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// skipped are the folders a copy leaves out: history, built tools and
// binaries, notebooks, reports and cached results.
var skipped = map[string]bool{".git": true, ".tools": true, "bin": true, "notebooks": true, "reports": true,
	filepath.Join("data", "results"): true}

// Copy copies the module rooted at root into a new temporary directory of
// t and returns that directory. Every file is copied, so a package added to
// the module needs no change here.
func Copy(t testing.TB, root string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipped[rel] {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying the module: %v", err)
	}
	return dst
}

package labkit

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
)

// CodeVersion stamps a result with the code that computed it.
type CodeVersion struct {
	// Commit is the git commit (from the build info or git), "" if unknown.
	Commit string `msgpack:"commit" json:"commit"`
	// Dirty is true when the work tree had uncommitted changes.
	Dirty bool `msgpack:"dirty" json:"dirty"`
	// Source is a hash of the module's non-test Go files when the source
	// tree is found; it changes with any edit, committed or not.
	Source string `msgpack:"source" json:"source"`
	// Go is the Go version that built the code.
	Go string `msgpack:"go" json:"go"`
}

// Key is what must match for a cached result to be reused: the source hash
// when known, else the commit (a dirty or unknown tree never matches).
func (c CodeVersion) Key() string {
	switch {
	case c.Source != "":
		return "src:" + c.Source
	case c.Commit != "" && !c.Dirty:
		return "git:" + c.Commit
	}
	return ""
}

func (c CodeVersion) String() string {
	s := c.Commit
	if s == "" {
		s = "unknown commit"
	} else if len(s) > 12 {
		s = s[:12]
	}
	if c.Dirty {
		s += "-dirty"
	}
	if c.Source != "" {
		s += " src:" + c.Source[:12]
	}
	return s + " " + c.Go
}

var currentCode = sync.OnceValue(func() CodeVersion {
	c := CodeVersion{Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				c.Commit = s.Value
			case "vcs.modified":
				c.Dirty = s.Value == "true"
			}
		}
	}
	root := FindRoot()
	if root == "" {
		return c
	}
	if c.Commit == "" {
		if out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
			c.Commit = strings.TrimSpace(string(out))
			st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
			c.Dirty = err != nil || len(st) > 0
		}
	}
	c.Source = sourceHash(root)
	return c
})

// CurrentCode returns the version of the running code (computed once).
func CurrentCode() CodeVersion { return currentCode() }

// sourceHash hashes the paths and contents of the module's non-test Go
// files, skipping directories named .*, _*, data and testdata at any depth.
func sourceHash(root string) string {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "data" || name == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return ""
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		rel, _ := filepath.Rel(root, f)
		h.Write([]byte(rel + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// FindRoot returns the SyncLab repository root: $SYNCLAB_ROOT, else the
// nearest directory above the working directory (or $GONB_DIR) holding a
// go.mod of module synclab; "" when none is found.
func FindRoot() string {
	if r := os.Getenv("SYNCLAB_ROOT"); r != "" {
		return r
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if g := os.Getenv("GONB_DIR"); g != "" {
		starts = append(starts, g)
	}
	for _, dir := range starts {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(b) == "synclab" {
				return dir
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return ""
}

// ResultsDir is the result store: $SYNCLAB_RESULTS, else data/results under
// the repository root, else data/results under the working directory.
func ResultsDir() string {
	if d := os.Getenv("SYNCLAB_RESULTS"); d != "" {
		return d
	}
	return filepath.Join(FindRoot(), "data", "results")
}

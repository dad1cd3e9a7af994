package labkit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"

	"synclab"
	"synclab/platforms"
)

// CodeVersion stamps a result with the code that computed it.
type CodeVersion struct {
	// Commit is the git commit the program was built from (its build
	// information), "" if unknown. It is for people: the cache keys on
	// Source.
	Commit string `msgpack:"commit" json:"commit"`
	// Dirty is true when the work tree had uncommitted changes.
	Dirty bool `msgpack:"dirty" json:"dirty"`
	// Source is the hash of the module's sources compiled into the program
	// that computed the result (synclab.SourceHash), "" when the run
	// function was not part of them (see RunExperiment).
	Source string `msgpack:"source" json:"source"`
	// Go is the Go version that built the code.
	Go string `msgpack:"go" json:"go"`
}

// Key is what must match for a cached result to be reused: the source hash.
// An unknown version has the key "", which matches nothing.
func (c CodeVersion) Key() string {
	if c.Source == "" {
		return ""
	}
	return "src:" + c.Source
}

// String is the version for people: the commit when the program was built
// from a git checkout (a notebook cell's program and the Docker image's
// lab are not), the sources' hash, which names the code in every case, and
// the Go version.
func (c CodeVersion) String() string {
	var s []string
	if c.Commit != "" {
		commit := c.Commit[:min(12, len(c.Commit))]
		if c.Dirty {
			commit += "-dirty"
		}
		s = append(s, commit)
	}
	src := "src:unknown"
	if c.Source != "" {
		src = "src:" + c.Source[:min(12, len(c.Source))]
	}
	return strings.Join(append(s, src, c.Go), " ")
}

var currentCode = sync.OnceValue(func() CodeVersion {
	c := CodeVersion{Go: runtime.Version(), Source: synclab.SourceHash()}
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
	return c
})

// CurrentCode returns the version of the module's code compiled into this
// program (computed once).
func CurrentCode() CodeVersion { return currentCode() }

// codeOf returns the code version that computes e's runs: CurrentCode when
// e.Run is a function of the module's packages, else CurrentCode without
// Source (a run function defined in a notebook cell or another module is
// code the lab cannot name), and whether the version is known.
func codeOf(e platforms.Experiment) (CodeVersion, bool) {
	c := CurrentCode()
	if !synclab.HasPackage(funcPackage(e.Run)) {
		c.Source = ""
		return c, false
	}
	return c, true
}

// funcPackage returns the import path of the package that defines f ("" for
// nil); functions of package main are attributed to the program's main
// package path.
func funcPackage(f any) string {
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	fn := runtime.FuncForPC(v.Pointer())
	if fn == nil {
		return ""
	}
	pkg := packageOf(fn.Name())
	if pkg == "main" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			return bi.Path
		}
	}
	return pkg
}

// packageOf returns the package path of a runtime function name such as
// "synclab/platforms/rk3399.Experiments.func1" or "main.(*T).run-fm".
func packageOf(name string) string {
	name, _, _ = strings.Cut(name, "[") // type arguments may hold paths
	slash := strings.LastIndexByte(name, '/') + 1
	if dot := strings.IndexByte(name[slash:], '.'); dot >= 0 {
		return name[:slash+dot]
	}
	return name
}

// unnamedCode remembers the experiments RunExperiment has warned about, so
// that it says once per program that their results are not cached.
var unnamedCode sync.Map

func warnUnnamedCode(log io.Writer, e platforms.Experiment) {
	pkg := funcPackage(e.Run)
	if _, seen := unnamedCode.LoadOrStore(e.Name+"\x00"+pkg, true); !seen {
		fmt.Fprintf(log, "labkit: experiment %s: its run function (package %s) is not part of the synclab module, so the lab cannot name its code version; its results are neither read from nor written to the result store\n", e.Name, pkg)
	}
}

// FindRoot returns the SyncLab repository root: $SYNCLAB_ROOT, else the
// nearest directory above the working directory, $GONB_DIR or the running
// program (bin/lab, run from anywhere) holding a go.mod of module synclab;
// "" when none is found.
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
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
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
// the repository root (FindRoot), else synclab/results under the user's
// cache directory (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux);
// "" when none of them is known.
func ResultsDir() string {
	if d := os.Getenv("SYNCLAB_RESULTS"); d != "" {
		return d
	}
	if root := FindRoot(); root != "" {
		return filepath.Join(root, "data", "results")
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "synclab", "results")
	}
	return ""
}

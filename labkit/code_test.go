package labkit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"synclab/platforms"
)

func TestFindRootReadsTheModulePath(t *testing.T) {
	t.Setenv("SYNCLAB_ROOT", "")
	t.Setenv("GONB_DIR", "")
	tests := []struct {
		name, gomod string
		found       bool
	}{
		{"plain", "module synclab\n\ngo 1.26\n", true},
		{"comment first", "// SyncLab\nmodule synclab\n", true},
		{"quoted, no newline", `module "synclab"`, true},
		{"CRLF", "module synclab\r\n", true},
		{"other module", "module synclabx\n", false},
	}
	for _, tc := range tests {
		root := t.TempDir()
		sub := filepath.Join(root, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(tc.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Chdir(sub)
		got := FindRoot()
		if tc.found && got != root || !tc.found && got == root {
			t.Errorf("%s: FindRoot() = %q, root %q, want found %v", tc.name, got, root, tc.found)
		}
	}
}

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"synclab/platforms/rk3399.Experiments.func1": "synclab/platforms/rk3399",
		"synclab/platforms/esp32.(*model).run-fm":    "synclab/platforms/esp32",
		"synclab.F":           "synclab",
		"main.main.func1":     "main",
		"main.g[...].func2":   "main",
		"example.com/x/y.Run": "example.com/x/y",
		"gopkg.in/yaml.v3.F":  "gopkg.in/yaml",
		"synclab/labkit.wrap[go.shape.struct { a/b.C }].f": "synclab/labkit",
		"reflect.makeFuncStub":                             "reflect",
	} {
		if got := packageOf(name); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", name, got, want)
		}
	}
}

// foreignRun is fixtureRun made by reflect.MakeFunc: a function whose code
// is not in the synclab module, like one defined in a notebook cell.
func foreignRun(calls *atomic.Int32) platforms.RunFunc {
	var run platforms.RunFunc
	v := reflect.MakeFunc(reflect.TypeOf(run), func(args []reflect.Value) []reflect.Value {
		calls.Add(1)
		r, err := fixtureRun(args[0].Interface().(context.Context), args[1].Interface().(platforms.RunSpec))
		return []reflect.Value{reflect.ValueOf(r), reflect.ValueOf(&err).Elem()}
	})
	reflect.ValueOf(&run).Elem().Set(v)
	return run
}

func TestCodeOfKnowsTheModulesFunctions(t *testing.T) {
	if c, ok := codeOf(fixture()); !ok || c.Key() == "" || c != CurrentCode() {
		t.Fatalf("codeOf(fixture) = %v, %v: the test's run function is in synclab/labkit", c, ok)
	}
	var calls atomic.Int32
	c, ok := codeOf(withRun(fixture(), foreignRun(&calls)))
	if ok || c.Key() != "" || c.Go == "" || !strings.Contains(c.String(), "src:unknown") {
		t.Fatalf("codeOf(foreign) = %v, %v: want an unknown source", c, ok)
	}
}

// A run function the lab cannot name the code of is never cached, and the
// runner says so once.
func TestUnknownCodeIsNeverCached(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	var calls atomic.Int32
	e := withRun(fixture(), foreignRun(&calls))
	e.Name = "fixture-foreign"
	for range 2 {
		res, err := RunExperiment(context.Background(), e, RunOptions{Dir: dir, Progress: NoProgress, Log: &log})
		if err != nil || res.Code.Key() != "" || !res.Complete {
			t.Fatalf("foreign run: %v %+v", err, res.Code)
		}
	}
	if calls.Load() != 20 || strings.Count(log.String(), "cannot name its code version") != 1 {
		t.Fatalf("computed %d runs (want 20), log %q (want one note)", calls.Load(), log.String())
	}
	assertOnly(t, dir)
	// Shards of unknown code do not merge: nothing says they match.
	var parts []*Result
	for i := range 2 {
		p, _ := Execute(context.Background(), e, RunOptions{Shard: Shard{Index: i, Count: 2}, Progress: NoProgress})
		parts = append(parts, p)
	}
	if _, err := Merge(parts...); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Fatalf("merge of unknown code: %v", err)
	}
}

func TestResultsDirOutsideTheRepository(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", "")
	t.Setenv("SYNCLAB_ROOT", "")
	t.Setenv("GONB_DIR", "")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Chdir(t.TempDir())
	if got, want := ResultsDir(), filepath.Join(cache, "synclab", "results"); got != want {
		t.Fatalf("ResultsDir() = %q outside the repository, want %q", got, want)
	}
	t.Setenv("SYNCLAB_RESULTS", "/elsewhere")
	if got := ResultsDir(); got != "/elsewhere" {
		t.Fatalf("ResultsDir() = %q, want $SYNCLAB_RESULTS", got)
	}
	t.Setenv("SYNCLAB_RESULTS", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if got := ResultsDir(); got != "" {
		t.Fatalf("ResultsDir() = %q with no cache directory, want \"\"", got)
	}
	var log bytes.Buffer
	res, err := RunExperiment(context.Background(), fixture(), RunOptions{Progress: NoProgress, Log: &log})
	if err != nil || !res.Complete || !strings.Contains(log.String(), "no result store") {
		t.Fatalf("run without a store: %v, log %q", err, log.String())
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Fatalf("the run created %v in the working directory", entries)
	}
}

// A code version reads as the short commit (when the program had one),
// the sources' hash, which names the code in every case, and Go's version;
// a program without a commit (a notebook cell's, the Docker image's lab)
// says nothing about one.
func TestCodeVersionString(t *testing.T) {
	const commit, src = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba98"
	for _, tc := range []struct {
		c    CodeVersion
		want string
	}{
		{CodeVersion{Commit: commit, Source: src, Go: "go1.26.8"}, "0123456789ab src:fedcba987654 go1.26.8"},
		{CodeVersion{Commit: commit, Dirty: true, Source: src, Go: "go1.26.8"}, "0123456789ab-dirty src:fedcba987654 go1.26.8"},
		{CodeVersion{Source: src, Go: "go1.26.8"}, "src:fedcba987654 go1.26.8"},
		{CodeVersion{Go: "go1.26.8"}, "src:unknown go1.26.8"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/labkit/internal/repotest"
)

// staleCheck is a platform whose one metric is a constant, the "formula"
// the test edits between builds.
const staleCheck = `// Package stalecheck is a test platform with a constant metric.
package stalecheck

import (
	"context"

	"synclab/platforms"
)

// Experiments returns the test experiment.
func Experiments() []platforms.Experiment {
	return []platforms.Experiment{{
		Name: "stale-check", Description: "a constant", Platform: "stalecheck", Repeats: 1, Seed: 1,
		Params:   platforms.Params{{Key: "n", Value: 1, Prov: platforms.CODE, Source: "the test", Min: 1, Max: 10}},
		Variants: []platforms.Variant{{Name: "v"}, {Name: "w"}},
		Metrics:  []platforms.Metric{{Name: "m", Unit: "1"}},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			return platforms.RunResult{Metrics: map[string]float64{"m": FORMULA}}, nil
		},
	}}
}
`

// repoCopy copies the module into a temporary directory and adds the
// stale-check platform to its catalog.
func repoCopy(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := repotest.Copy(t, root)
	edit(t, filepath.Join(dir, "labkit", "catalog", "catalog.go"), map[string]string{
		"\t\trk3399.Experiments(),\n":      "\t\trk3399.Experiments(),\n\t\tstalecheck.Experiments(),\n",
		"\t\"synclab/platforms/rk3399\"\n": "\t\"synclab/platforms/rk3399\"\n\t\"synclab/platforms/stalecheck\"\n",
	})
	return dir
}

// edit replaces each old string of the file by its new one; each must be
// there.
func edit(t *testing.T, path string, repl map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for old, new := range repl {
		if !strings.Contains(s, old) {
			t.Fatalf("%s no longer holds %q", path, old)
		}
		s = strings.Replace(s, old, new, 1)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The scenarios with real builds: a binary never serves another
// build's result (the old one after the new one, the new one after the
// old), whatever its VCS stamp says; an edit of the reference data shows in
// the claims of the next build.
func TestStaleBinaryAndReferenceEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command four times in a copy of the repository")
	}
	dir := repoCopy(t)
	store := t.TempDir()
	pkg := filepath.Join(dir, "platforms", "stalecheck", "stalecheck.go")
	tsv := filepath.Join(dir, "data", "reference", "stale-check.tsv")
	build := func(name, formula, article string, flags ...string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pkg, []byte(strings.Replace(staleCheck, "FORMULA", formula, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tsv, []byte("stale-article\tstale-check\tv\tm\t"+article+"\t1\tv is "+article+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(t.TempDir(), name)
		cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, "./labkit/cmd/lab")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
		return bin
	}
	// run returns the metric's mean for v, the article's number and stderr.
	run := func(bin string) (float64, float64, string) {
		t.Helper()
		cmd := exec.Command(bin, "run", "stale-check", "-json")
		cmd.Env = append(os.Environ(), "SYNCLAB_RESULTS="+store)
		cmd.Dir = dir // where the sources are, as when a user rebuilds

		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var doc labkit.RunDoc
		if err == nil {
			err = json.Unmarshal(out, &doc)
		}
		if err != nil || len(doc.Reference) != 1 {
			t.Fatalf("%s: %v\n%s%s", filepath.Base(bin), err, out, stderr.String())
		}
		return float64(doc.Variants[0].Metrics["m"]), doc.Reference[0].Value, stderr.String()
	}
	old := build("old", "1", "10")
	if m, _, _ := run(old); m != 1 {
		t.Fatalf("old build computes %v, want 1", m)
	}
	cur := build("new", "2", "10")
	for i, bin := range []string{cur, old, cur, cur} {
		want := map[string]float64{old: 1, cur: 2}[bin]
		if m, _, _ := run(bin); m != want {
			t.Fatalf("step %d: %s serves %v, its code computes %v", i, filepath.Base(bin), m, want)
		}
	}
	// The same sources without a VCS stamp are the same code version:
	// the new build's result is served, not recomputed.
	files, _ := filepath.Glob(filepath.Join(store, "stale-check-*.msgpack"))
	if len(files) != 1 {
		t.Fatalf("store holds %v", files)
	}
	before, _ := os.Stat(files[0])
	noVCS := build("novcs", "2", "10", "-buildvcs=false")
	if m, _, _ := run(noVCS); m != 2 {
		t.Fatalf("a -buildvcs=false build of the new sources serves %v", m)
	}
	if after, err := os.Stat(files[0]); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("a -buildvcs=false build of the same sources recomputed the result (%v)", err)
	}
	// An edited article number: the next build's claims show it.
	edited := build("edited", "2", "12.5")
	if m, art, _ := run(edited); m != 2 || art != 12.5 {
		t.Fatalf("after the reference edit: metric %v, article %v; want 2 and 12.5", m, art)
	}
}

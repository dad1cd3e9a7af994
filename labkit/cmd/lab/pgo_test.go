package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit/catalog"
)

// TestProfileGuidedBuildIsBitIdentical: the lab command built with its
// profile (default.pgo, which go build reads) computes every experiment of
// the catalog bit for bit as a build without it. Notebooks run the packages
// without the profile and share the result store with the command; the
// profile may change only what the compiler inlines, and this catches a
// compiler that would then fuse floating-point operations differently.
func TestProfileGuidedBuildIsBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command twice")
	}
	build := func(pgo string) string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), "lab")
		if out, err := exec.Command("go", "build", "-pgo="+pgo, "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build -pgo=%s: %v\n%s", pgo, err, out)
		}
		return bin
	}
	with, without := build("auto"), build("off")
	if out, err := exec.Command("go", "version", "-m", with).Output(); err != nil || !bytes.Contains(out, []byte("-pgo=")) {
		t.Fatalf("go build did not use default.pgo (go version -m: %v)\n%s", err, out)
	}
	// results returns lab run's JSON without its wall time, keys sorted.
	results := func(bin, name string) []byte {
		t.Helper()
		cmd := exec.Command(bin, "run", name, "-json", "-runs", "-fresh", "-repeats", "2")
		cmd.Env = append(os.Environ(), "SYNCLAB_RESULTS="+t.TempDir())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s run %s: %v\n%s", bin, name, err, stderr.String())
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		delete(doc, "wall_s")
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, e := range catalog.All() {
		if a, b := results(with, e.Name), results(without, e.Name); !bytes.Equal(a, b) {
			t.Errorf("%s: the build with default.pgo computes other results than the build without it", e.Name)
		}
	}
}

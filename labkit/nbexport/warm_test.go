package nbexport

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// warmFixture writes a module at root whose labkit/catalog builds only with the build tag
// "warmtag" (a file without it does not compile), and a report kernel spec under root/.tools
// whose -go_work points at it, with env.
func warmFixture(t *testing.T, goWork bool, env map[string]string) Tools {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                   "module warmfixture\n\ngo 1.22\n",
		"labkit/catalog/ok.go":     "//go:build warmtag\n\npackage catalog\n",
		"labkit/catalog/broken.go": "//go:build !warmtag\n\npackage catalog\n\nvar x int = \"not an int\"\n",
	}
	writeTree(t, root, files)
	tools := Tools{Root: root}
	argv := []string{"gonb", "--kernel", "{connection_file}"}
	if goWork {
		argv = append(argv, "-go_work="+root)
	}
	raw, err := json.Marshal(kernelJSON{Argv: argv, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(tools.reportKernelSpec()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tools.reportKernelSpec(), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return tools
}

// The warm-up builds the kernel's -go_work module with the kernel's settings (here a build tag in
// its GOFLAGS, without which the package does not compile), and a package that does not build is
// an error naming the repository and quoting the compiler, before any notebook runs.
func TestWarmBuildCache(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	path := filepath.Dir(goBin)
	cache := map[string]string{"GOCACHE": t.TempDir(), "GOFLAGS": "-mod=mod", "GOWORK": "off"}
	with := func(kv map[string]string) map[string]string {
		env := map[string]string{"PATH": path}
		for k, v := range cache {
			env[k] = v
		}
		for k, v := range kv {
			env[k] = v
		}
		return env
	}
	ctx := context.Background()
	if err := warmBuildCache(ctx, warmFixture(t, true, with(map[string]string{"GOFLAGS": "-mod=mod -tags=warmtag"}))); err != nil {
		t.Errorf("with the kernel's GOFLAGS: %v, want the package built", err)
	}
	tools := warmFixture(t, true, with(nil))
	err = warmBuildCache(ctx, tools)
	if err == nil || !strings.Contains(err.Error(), "does not build as the notebooks' kernel builds it") ||
		!strings.Contains(err.Error(), tools.Root) || !strings.Contains(err.Error(), "broken.go") {
		t.Errorf("without the tag: error %v, want one naming the repository and quoting the compiler on broken.go", err)
	}
	if err := warmBuildCache(ctx, warmFixture(t, false, with(nil))); err != nil {
		t.Errorf("a kernel without -go_work: %v, want nothing to warm", err)
	}
	if err := warmBuildCache(ctx, warmFixture(t, true, map[string]string{"PATH": t.TempDir()})); err == nil || !strings.Contains(err.Error(), "go not found on the kernel's PATH") {
		t.Errorf("no go on the kernel's PATH: error %v", err)
	}
}

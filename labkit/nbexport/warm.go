package nbexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// warmPackage is what a notebook cell imports at most from the repository: the catalog reaches
// labkit, every platform, sim and the libraries labkit displays and computes with.
const warmPackage = "./labkit/catalog"

// warmBuildCache compiles warmPackage of the module the kernel builds against (its -go_work) with
// the kernel's settings (its PATH's go, GOFLAGS, CGO_ENABLED), once, before notebooks start side by
// side. GoNB builds a program per cell: after a change to the repository (an edit, a pull) the
// first cell of every notebook started at the same time compiled the same packages, each for
// itself; the Go build cache then serves them all. A build error is reported here, before any
// notebook runs, rather than in the first cell of each. Without a -go_work module (a kernel set up
// by hand) there is nothing to warm.
func warmBuildCache(ctx context.Context, t Tools) error {
	spec, err := readKernelSpec(t.reportKernelSpec())
	if errors.Is(err, fs.ErrNotExist) { // set up before the report kernel existed
		spec, err = readKernelSpec(t.kernelSpec())
	}
	if err != nil {
		return err
	}
	root := spec.goWork()
	if root == "" {
		return nil
	}
	goBin, err := lookPathIn(spec.Env["PATH"], "go")
	if err != nil {
		return fmt.Errorf("warming the Go build cache: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", warmPackage)
	cmd.Dir = root
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v) // the last of a duplicate key wins
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the repository at %s does not build as the notebooks' kernel builds it (go build %s): %v\n%s", root, warmPackage, err, tail(string(out), 20))
	}
	return nil
}

// reportKernelSpec returns the path of the kernel spec headless runs use (Tools.Env puts its
// folder first on JUPYTER_PATH).
func (t Tools) reportKernelSpec() string {
	return filepath.Join(t.Dir(), "jupyter-report", "kernels", kernelName, "kernel.json")
}

// kernelJSON is what the export reads of a Jupyter kernel spec (kernel.json).
type kernelJSON struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env"`
}

// readKernelSpec reads the kernel spec at path.
func readKernelSpec(path string) (kernelJSON, error) {
	var k kernelJSON
	b, err := os.ReadFile(path)
	if err != nil {
		return k, err
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return k, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// goWork returns the module GoNB's -go_work flag gives every notebook, "" if none.
func (k kernelJSON) goWork() string {
	for _, a := range k.Argv {
		if v, ok := strings.CutPrefix(a, "-go_work="); ok {
			return v
		}
	}
	return ""
}

// lookPathIn finds the executable name in the directories of path (a PATH value), or on this
// process's PATH when path is empty.
func lookPathIn(path, name string) (string, error) {
	if path == "" {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on the kernel's PATH %s", name, path)
}

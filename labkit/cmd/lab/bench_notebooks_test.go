package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchNotebooks: lab bench -notebooks executes the notebooks cold in a
// result store of its own (the caller's is left alone) and records the
// total and each notebook's wall time; a glob matching nothing is an error.
func TestBenchNotebooks(t *testing.T) {
	fig := benchFigures{}
	if _, err := notebookPaths(filepath.Join(t.TempDir(), "*.ipynb")); err == nil || !strings.Contains(err.Error(), "no notebook matches") {
		t.Errorf("empty glob: %v, want an error saying no notebook matches", err)
	}
	dir := t.TempDir()
	nb := `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
		{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "var (\n\tN = 3\n)", "outputs": [], "execution_count": null},
		{"cell_type": "code", "metadata": {}, "source": "%%\nfmt.Println(N)", "outputs": [], "execution_count": null}]}`
	if err := os.WriteFile(filepath.Join(dir, "tiny.ipynb"), []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without nbconvert the bench stops before it times anything, rather
	// than note the missing figure minutes later and exit 0.
	t.Run("no nbconvert", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		code, _, stderr := runCLI(t, "bench", "-notebooks", filepath.Join(dir, "*.ipynb"))
		if code != 1 || !strings.Contains(stderr, "-notebooks: jupyter-nbconvert not found") {
			t.Errorf("exit %d, stderr %q: want 1 and jupyter-nbconvert not found", code, stderr)
		}
	})
	if _, err := exec.LookPath("jupyter-nbconvert"); err != nil {
		if os.Getenv("SYNCLAB_E2E") == "1" {
			t.Fatal("SYNCLAB_E2E=1 but jupyter-nbconvert is not installed (make setup-test installs it)")
		}
		t.Skip("jupyter-nbconvert is not installed")
	}
	mine := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", mine)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SYNCLAB_ROOT", root)
	paths, err := notebookPaths(filepath.Join(dir, "*.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := benchNotebooks(context.Background(), fig, paths, t.Logf); err != nil {
		t.Fatal(err)
	}
	total, _ := fig["notebooks_cold_wall_s"].(float64)
	one, _ := fig["notebook_tiny_wall_s"].(float64)
	if one <= 0 || total < one || fig["notebooks_cold"] != "tiny" {
		t.Errorf("figures %v: want notebooks_cold tiny, notebook_tiny_wall_s > 0 and a total at least as long", fig)
	}
	// nbconvert, the kernel and a cell's go build take a second of CPU or
	// more; the bench's own goroutines are not counted.
	if cpu, _ := fig["notebooks_cold_cpu_s"].(float64); cpu < 0.5 {
		t.Errorf("notebooks_cold_cpu_s = %v, want the CPU of the processes the export ran (a second or more)", cpu)
	}
	if got := os.Getenv("SYNCLAB_RESULTS"); got != mine {
		t.Errorf("SYNCLAB_RESULTS is %q after the bench, want the caller's %q back", got, mine)
	}
}

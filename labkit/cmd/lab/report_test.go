package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportBadInput: lab report refuses bad input before any work, with
// exit status 2 and one line naming the problem (no Python traceback).
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nb := `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
		{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "var (\n\tN = 3\n)", "outputs": []}]}`
	good := write("a/x.ipynb", nb)
	twin := write("b/x.ipynb", nb)
	broken := write("broken.ipynb", "{\n  \"cells\": [\n")
	file := write("out.txt", "")
	out := filepath.Join(dir, "reports")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no notebook", []string{"report", "-o", out}, "usage: lab report"},
		{"no -o", []string{"report", good}, "usage: lab report"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.ipynb"), "-o", out}, "nope.ipynb: no such file"},
		{"broken JSON", []string{"report", broken, "-o", out}, "not a notebook: invalid JSON at line 3"},
		{"same base name", []string{"report", good, twin, "-o", out}, "would both write"},
		{"-o is a file", []string{"report", good, "-o", file}, "not a directory"},
		{"-p without =", []string{"report", good, "-o", out, "-p", "N"}, "want name=value"},
		{"-p unknown", []string{"report", good, "-o", out, "-p", "M=1"}, "no such parameter; the notebook's parameters: N"},
		{"-p wrong type", []string{"report", good, "-o", out, "-p", "N=2.5"}, "want a whole number"},
		{"-j 0", []string{"report", good, "-o", out, "-j", "0"}, "-j 0: want at least 1 notebook at a time"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, stderr, tc.want)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; !strings.HasPrefix(tc.want, "usage") && lines != 1 {
			t.Errorf("%s: %d lines on stderr, want one:\n%s", tc.name, lines, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused report created the output directory")
	}
}

// TestList: one line per experiment, each within the width.
func TestList(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	code, out, _ := runCLI(t, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n := len(experiments()); len(lines) != n {
		t.Errorf("%d lines for %d experiments:\n%s", len(lines), n, out)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d characters, want at most 80: %s", n, l)
		}
	}
	if !strings.Contains(out, "cli-fixture") || !strings.Contains(out, "2 variants") {
		t.Errorf("list lacks the fixture:\n%s", out)
	}
}

package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit"
)

// A shard run without -result goes to the store and says where; the same
// run again is served from the store and says so. -csv writes one row per
// run, to stdout for "-" or to a file, the same either way.
func TestRunShardAndCSVOutput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	e, _ := lookup("cli-fixture")
	path := labkit.CachePath(dir, e, labkit.Shard{Index: 1, Count: 2})
	for _, want := range []string{"written to " + path + "\n", "written to " + path + " (from the store)\n"} {
		code, out, stderr := runCLI(t, "run", "cli-fixture", "-shard", "1/2")
		if code != 0 || !strings.HasPrefix(out, "shard 1/2 of cli-fixture: ") || !strings.HasSuffix(out, want) {
			t.Fatalf("lab run -shard 1/2: exit %d, %q (%s); want it to end %q", code, out, stderr, want)
		}
	}
	if _, err := labkit.Load(path); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := runCLI(t, "run", "cli-fixture", "-csv", "-")
	if code != 0 {
		t.Fatalf("lab run -csv -: exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 1+len(e.Variants)*e.Repeats || rows[0][0] != "experiment" || rows[1][0] != "cli-fixture" {
		t.Fatalf("CSV on stdout: %v, %d rows, want a header and %d runs:\n%s", err, len(rows), len(e.Variants)*e.Repeats, out)
	}
	file := filepath.Join(t.TempDir(), "runs.csv")
	if code, _, stderr := runCLI(t, "run", "cli-fixture", "-csv", file); code != 0 {
		t.Fatalf("lab run -csv FILE: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != out {
		t.Errorf("CSV file (%v) differs from the CSV on stdout", err)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/labkit/ledger"
)

// README.md's "What the models say so far" section is what `lab claims
// -readme` writes from the runs at the current code: every number it
// states comes from a run (simulated afresh, in a store of the test's own).
func TestReadmeResultsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the claims ledger's experiments")
	}
	t.Setenv("SYNCLAB_RESULTS", t.TempDir()) // never data/results: always simulate
	path := filepath.Join("..", "..", "..", "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Load()
	if err != nil {
		t.Fatal(err)
	}
	results, err := l.Run(context.Background(), lookup, labkit.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ledger.Splice(string(readme), l.Readme(results, l.JudgeResults(results)))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if want != string(readme) {
		t.Fatal("README.md's results section is stale: run `go run ./labkit/cmd/lab claims -readme README.md`")
	}
	if head := strings.Index(want, "\n## What the models say so far\n"); head < 0 || strings.Index(want, ledger.ReadmeBegin) < head {
		t.Fatal("README.md: the results must sit under \"## What the models say so far\"")
	}
}

// lab claims prints one row per claim (the ledger's table), -json the
// judgements with a verdict each; bad input exits 2.
func TestCmdClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the claims ledger's experiments")
	}
	t.Setenv("SYNCLAB_RESULTS", t.TempDir()) // never data/results: always simulate
	l, err := ledger.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"claims", "-json"}, &out, &errb); code != exitOK {
		t.Fatalf("lab claims -json: exit %d: %s", code, errb.String())
	}
	var js []ledger.Judgement
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if len(js) != len(l.Claims) {
		t.Fatalf("%d judgements, want %d", len(js), len(l.Claims))
	}
	for _, j := range js {
		if j.Verdict == "" || j.Verdict == ledger.NotSimulated {
			t.Errorf("%s: verdict %q (%s)", j.ID, j.Verdict, j.Why)
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"claims"}, &out, &errb); code != exitOK || strings.Count(out.String(), "\n") < len(l.Claims) {
		t.Errorf("lab claims: exit %d, %d lines", code, strings.Count(out.String(), "\n"))
	}
	if code := run(context.Background(), []string{"claims", "extra"}, &out, &errb); code != exitUsage {
		t.Errorf("lab claims extra: exit %d, want %d", code, exitUsage)
	}
}

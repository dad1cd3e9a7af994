package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"synclab/labkit"
)

// fixturePlatforms are registered by this package's tests only; the lab
// binary and README.md do not know them.
var fixturePlatforms = map[string]bool{"cli-bench": true}

// README.md carries the platform parameter tables generated from the code,
// between the params markers, so the page never disagrees with the models.
func TestReadmeParamsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "..", "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var groups []labkit.PlatformGroup
	for _, g := range labkit.PlatformParams(experiments()) {
		if !fixturePlatforms[g.Platform] {
			groups = append(groups, g)
		}
	}
	want, err := spliceParams(string(readme), paramsMarkdown(groups))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if want != string(readme) {
		t.Fatal("README.md's parameter tables are stale: run `go run ./labkit/cmd/lab platforms -readme README.md` " +
			"(or paste the output of `go run ./labkit/cmd/lab platforms -md` between " + paramsBegin + " and " + paramsEnd + ")")
	}
	// The tables sit under their heading, one <details> block per platform.
	doc := string(readme)
	head := strings.Index(doc, "\n## Platform parameters\n")
	if head < 0 || strings.Index(doc, paramsBegin) < head {
		t.Fatal("README.md: the parameter tables must sit under \"## Platform parameters\"")
	}
	for _, name := range []string{"esp32", "generic", "rk3399"} {
		if !strings.Contains(doc[head:], "<details><summary>"+name+" (") {
			t.Errorf("README.md: no <details> block for %s under ## Platform parameters", name)
		}
	}
}

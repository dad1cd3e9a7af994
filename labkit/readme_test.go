package labkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's example is Example_customExperiment, word for word, so the
// code a new user copies compiles and gives the output shown.
func TestReadmeExampleMatches(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_custom_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	body := s[strings.Index(s, "\tlabkit.Register("):strings.Index(s, "\t// Output:")]
	var lines []string
	for _, l := range strings.SplitAfter(body, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if want := strings.Join(lines, ""); !strings.Contains(string(readme), "```go\n"+want+"```") {
		t.Fatal("README.md's Go example differs from Example_customExperiment; copy the example into the README")
	}
}

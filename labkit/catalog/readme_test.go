package catalog_test

import (
	"encoding/json"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"synclab/labkit/internal/repotest"
)

// readmeBlock returns the fenced Go block of the README that starts with
// first (a line inside the fence).
func readmeBlock(t *testing.T, readme, first string) string {
	t.Helper()
	i := strings.Index(readme, "```go\n"+first)
	if i < 0 {
		t.Fatalf("README.md has no Go block starting with %q", first)
	}
	body := readme[i+len("```go\n"):]
	return body[:strings.Index(body, "```")]
}

// repoReadme returns the repository's root and its README.
func repoReadme(t *testing.T) (root, readme string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return root, string(b)
}

// readmeSource is readmeBlock for a whole Go file, which must be
// gofmt-formatted, as a reader's copy would be.
func readmeSource(t *testing.T, readme, first string) string {
	t.Helper()
	src := readmeBlock(t, readme, first)
	if got, err := format.Source([]byte(src)); err != nil || string(got) != src {
		t.Fatalf("the README's %s is not gofmt-formatted (%v)", strings.TrimSpace(first), err)
	}
	return src
}

// TestReadmeNewPlatform takes the README's "Writing your own platform" steps
// in a copy of the repository: the platform's folder, its import and one
// line in the catalog, then lab list and lab run of its experiment.
func TestReadmeNewPlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command in a copy of the repository")
	}
	root, readme := repoReadme(t)
	platform := readmeSource(t, readme, "// platforms/mysoc/mysoc.go\n")
	line := strings.TrimSpace(readmeBlock(t, readme, "\t\tmysoc.Experiments(),\n"))
	imp := strings.TrimSpace(readmeBlock(t, readme, "\t\"synclab/platforms/mysoc\"\n"))

	if _, err := os.Stat(filepath.Join(root, "platforms", "mysoc")); err == nil {
		t.Skip("platforms/mysoc is here already (the README's steps were taken in this checkout); this test takes them in a copy without it")
	}
	dir := repotest.Copy(t, root)
	write(t, filepath.Join(dir, "platforms", "mysoc", "mysoc.go"), platform)
	catPath := filepath.Join(dir, "labkit", "catalog", "catalog.go")
	cat, err := os.ReadFile(catPath)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(cat), "\t\trk3399.Experiments(),\n", "\t\trk3399.Experiments(),\n\t\t"+line+"\n", 1)
	src = strings.Replace(src, "\t\"synclab/platforms/esp32\"\n", "\t\"synclab/platforms/esp32\"\n\t"+imp+"\n", 1)
	if src == string(cat) {
		t.Fatal("catalog.go no longer has the line the README's step goes beside")
	}
	write(t, catPath, src)

	lab := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"run", "./labkit/cmd/lab"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "SYNCLAB_RESULTS="+filepath.Join(dir, "results"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("lab %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	if out := lab("list"); !strings.Contains(out, "my-spinlock") {
		t.Fatalf("lab list does not show the new experiment:\n%s", out)
	}
	var res struct {
		Variants []struct {
			Metrics map[string]float64 `json:"metrics"`
		} `json:"variants"`
	}
	out := lab("run", "my-spinlock", "-set", "transfer_ns=200", "-json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Variants) != 1 {
		t.Fatalf("lab run my-spinlock -json: %v\n%s", err, out)
	}
	// Each critical section costs at least its 150 cycles of work at 1 GHz.
	if ns := res.Variants[0].Metrics["ns_per_op"]; !(ns > 150) {
		t.Fatalf("ns_per_op = %g, want more than 150", ns)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadmeOwnWorkload takes the README's "Your own workload" steps: a
// module of one's own beside the repository, in a Go workspace, whose
// main.go is the README's; go run prints the sweep's summary, consumer-bound
// at 100 µs of filtering per reading plus the kernel's receive path.
func TestReadmeOwnWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program of its own against the repository")
	}
	root, readme := repoReadme(t)
	prog := readmeSource(t, readme, "// mywl/main.go")
	dir := filepath.Join(t.TempDir(), "mywl")
	write(t, filepath.Join(dir, "main.go"), prog)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GOWORK" && k != "GOFLAGS" && k != "SYNCLAB_ROOT" {
			env = append(env, kv)
		}
	}
	env = append(env, "SYNCLAB_RESULTS="+t.TempDir())
	var out string
	for _, args := range [][]string{{"mod", "init", "mywl"}, {"work", "init", ".", root}, {"run", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		o, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, o, stderr.String())
		}
		out = string(o)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != "us_per_item" {
			continue
		}
		rows++
		if v, err := strconv.ParseFloat(f[3], 64); err != nil || v < 100 || v > 110 {
			t.Errorf("depth %s: %s µs per reading, want the consumer's pace, 100-110 µs", f[0], f[3])
		}
	}
	if rows != 3 {
		t.Errorf("%d us_per_item rows, want one per depth (1, 4, 16):\n%s", rows, out)
	}
}

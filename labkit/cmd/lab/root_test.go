package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lab run -o from outside the repository: bin/lab finds its repository from
// its own path and inlines the charts' library; a copy of it that belongs to
// no repository still writes the report, and warns on stderr that its charts
// cannot be drawn.
func TestReportFindsTheRepositoryOfTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command")
	}
	repo := t.TempDir()
	const marker = "/* the fake repository's echarts.min.js */"
	for name, body := range map[string]string{
		"go.mod":                        "module synclab\n",
		".tools/echarts/echarts.min.js": marker,
	} {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inRepo := filepath.Join(repo, "bin", "lab")
	if out, err := exec.Command("go", "build", "-o", inRepo, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stray := filepath.Join(t.TempDir(), "lab")
	if b, err := os.ReadFile(inRepo); err != nil || os.WriteFile(stray, b, 0o755) != nil {
		t.Fatalf("copying the binary: %v", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "SYNCLAB_ROOT" && k != "SYNCLAB_ECHARTS" && k != "GONB_DIR" {
			env = append(env, kv)
		}
	}
	work := t.TempDir() // no repository at or above it
	for _, tt := range []struct {
		bin, want, warning string
	}{
		{inRepo, marker, ""},
		{stray, "charts cannot be drawn", "lab: warning: r.html written, but its charts cannot be drawn: no local ECharts copy (.tools/echarts/echarts.min.js): the SyncLab repository is not at or above the working directory or this program: run from the repository, or set SYNCLAB_ROOT to it"},
	} {
		os.Remove(filepath.Join(work, "r.html"))
		cmd := exec.Command(tt.bin, "run", "esp32-pingpong", "-o", "r.html")
		cmd.Dir, cmd.Env = work, append(env, "SYNCLAB_RESULTS="+t.TempDir())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s run -o r.html: %v\n%s", tt.bin, err, stderr.String())
		}
		page, err := os.ReadFile(filepath.Join(work, "r.html"))
		if err != nil || !strings.Contains(string(page), tt.want) {
			t.Errorf("%s: r.html (%v) lacks %q", tt.bin, err, tt.want)
		}
		if got := strings.Contains(stderr.String(), "warning"); got != (tt.warning != "") || !strings.Contains(stderr.String(), tt.warning) {
			t.Errorf("%s: stderr %q, want the warning %q", tt.bin, stderr.String(), tt.warning)
		}
	}
}

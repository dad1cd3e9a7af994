package deploy

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"synclab/labkit"
	"synclab/labkit/nbexport"
)

const (
	jobFile   = "k8s/lock-scaling-job.yaml"
	slurmFile = "slurm/sweep.sh"
)

// small shrinks the files' sweep (lock-scaling, 20 repeats) to seconds: later flags win.
var small = []string{"-repeats", "1", "-set", "duration_ms=2"}

// labBin is the lab CLI built from this checkout by TestMain.
var labBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	labBin = filepath.Join(dir, "lab")
	if out, err := exec.Command("go", "build", "-o", labBin, "synclab/labkit/cmd/lab").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building lab: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// decodeJob decodes a Job strictly: a field the Kubernetes API does not know is an error.
func decodeJob(b []byte) (*batchv1.Job, error) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		return nil, err
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		return nil, fmt.Errorf("apiVersion %q kind %q: want batch/v1 Job", job.APIVersion, job.Kind)
	}
	return &job, nil
}

func TestJobDecodesStrictly(t *testing.T) {
	b, err := os.ReadFile(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		edit    func(string) string
		wantErr string
	}{
		{"as committed", func(s string) string { return s }, ""},
		{"unknown spec field", func(s string) string {
			return strings.Replace(s, "completionMode: Indexed", "completionMod: Indexed", 1)
		}, `unknown field "completionMod"`},
		{"unknown container field", func(s string) string {
			return strings.Replace(s, "image: synclab", "image: synclab\n        imag: synclab", 1)
		}, `unknown field "imag"`},
		{"wrong kind", func(s string) string { return strings.Replace(s, "kind: Job", "kind: Pod", 1) }, `kind "Pod"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeJob([]byte(tt.edit(string(b))))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("decode: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("decode: %v, want an error containing %s", err, tt.wantErr)
			}
		})
	}
}

// TestJobRunsLocally runs the Job's command line for every completion index, with the volume
// mounted at a temporary folder, merges the shares and compares them with an unsharded run.
func TestJobRunsLocally(t *testing.T) {
	b, err := os.ReadFile(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJob(b)
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed (pods need JOB_COMPLETION_INDEX)", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Parallelism != *spec.Completions {
		t.Fatalf("completions %v, parallelism %v: want both set and equal", spec.Completions, spec.Parallelism)
	}
	n := int(*spec.Completions)
	pod := spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != imageUID(t) || sc.FSGroup == nil {
		t.Fatalf("securityContext %+v: want runAsUser %d (the image's user) and an fsGroup for the volume", sc, imageUID(t))
	}
	c := pod.Containers[0]
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(argv) != 3 || argv[0] != "sh" || argv[1] != "-c" {
		t.Fatalf("command %q, want [sh -c SCRIPT]", argv)
	}
	script := argv[2]
	if want := fmt.Sprintf("-shard $JOB_COMPLETION_INDEX/%d ", n); !strings.Contains(script, want) {
		t.Fatalf("command %q does not contain %q (the share count must equal completions)", script, want)
	}
	if len(c.VolumeMounts) != 1 || len(pod.Volumes) != 1 || c.VolumeMounts[0].Name != pod.Volumes[0].Name {
		t.Fatalf("volume mounts %+v, volumes %+v: want one volume, mounted", c.VolumeMounts, pod.Volumes)
	}
	out := t.TempDir()
	script = strings.ReplaceAll(script, c.VolumeMounts[0].MountPath+"/", out+"/")

	// lab on PATH, shrinking the sweep: the script's own flags come first, so ours win.
	shim := t.TempDir()
	shimScript := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" %s\n", labBin, strings.Join(small, " "))
	if err := os.WriteFile(filepath.Join(shim, "lab"), []byte(shimScript), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		run(t, []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(i), "PATH=" + shim + ":" + os.Getenv("PATH")}, "", "sh", "-c", script)
	}
	checkMerged(t, out, n)
}

// TestSlurmScriptRunsLocally runs the Slurm script as every task of its array would, merges the
// shares and compares them with an unsharded run (make test-slurm submits it to a real cluster).
func TestSlurmScriptRunsLocally(t *testing.T) {
	b, err := os.ReadFile(slurmFile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --array=0-(\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no #SBATCH --array=0-N line", slurmFile)
	}
	last, _ := strconv.Atoi(string(m[1]))
	n := last + 1
	script, err := filepath.Abs(slurmFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range n {
		env := []string{
			"SLURM_ARRAY_TASK_ID=" + strconv.Itoa(i), "SLURM_ARRAY_TASK_COUNT=" + strconv.Itoa(n),
			"PATH=" + filepath.Dir(labBin) + ":" + os.Getenv("PATH"),
		}
		run(t, env, dir, "bash", append([]string{script}, small...)...)
	}
	checkMerged(t, filepath.Join(dir, "parts"), n)
}

// checkMerged merges the n part files in dir with lab merge and compares the result with an
// unsharded run of the small sweep.
func checkMerged(t *testing.T, dir string, n int) {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "part-*.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != n {
		t.Fatalf("%d part files in %s, want %d", len(parts), dir, n)
	}
	merged := filepath.Join(t.TempDir(), "merged.msgpack")
	run(t, nil, "", labBin, append(append([]string{"merge"}, parts...), "-o", merged)...)
	whole := filepath.Join(t.TempDir(), "whole.msgpack")
	run(t, nil, "", labBin, append(append([]string{"run", "lock-scaling"}, small...), "-result", whole)...)
	if err := sameRuns(merged, whole); err != nil {
		t.Fatal(err)
	}
}

// run runs a command with env added to the environment and a result store of its own, in dir
// (the test's working directory when "").
func run(t *testing.T, env []string, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "SYNCLAB_RESULTS="+t.TempDir()), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// sameRuns reports whether two result files hold the same experiment definition and the same
// runs, bit for bit (timestamps and wall times aside).
func sameRuns(a, b string) error {
	ra, err := labkit.Load(a)
	if err != nil {
		return err
	}
	rb, err := labkit.Load(b)
	if err != nil {
		return err
	}
	switch {
	case ra.Hash != rb.Hash:
		return fmt.Errorf("%s and %s: different experiment definitions (%s vs %s)", a, b, ra.Hash, rb.Hash)
	case !ra.Complete || !rb.Complete:
		return fmt.Errorf("%s complete %v, %s complete %v", a, ra.Complete, b, rb.Complete)
	case len(ra.Runs) != len(rb.Runs):
		return fmt.Errorf("%s has %d runs, %s %d", a, len(ra.Runs), b, len(rb.Runs))
	}
	for i := range ra.Runs {
		ea, err := canonical(ra.Runs[i])
		if err != nil {
			return err
		}
		eb, err := canonical(rb.Runs[i])
		if err != nil {
			return err
		}
		if !bytes.Equal(ea, eb) {
			return fmt.Errorf("run %d (%s) differs: %s has %v, %s has %v", i, ra.RunLabel(ra.Runs[i]), a, ra.Runs[i].Metrics, b, rb.Runs[i].Metrics)
		}
	}
	return nil
}

// canonical encodes v as msgpack with every map's keys sorted (decoding it into generic maps
// first), so equal values give equal bytes, floats compared bit for bit.
func canonical(v any) ([]byte, error) {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := msgpack.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	err = enc.Encode(generic)
	return buf.Bytes(), err
}

// TestSameRunsFiles compares the two result files named by SYNCLAB_SAME_RUNS ("A B"); make
// test-slurm uses it on the cluster's merged result and an unsharded run.
func TestSameRunsFiles(t *testing.T) {
	files := strings.Fields(os.Getenv("SYNCLAB_SAME_RUNS"))
	if len(files) == 0 {
		t.Skip("set SYNCLAB_SAME_RUNS='A B' to compare two result files (make test-slurm does)")
	}
	if len(files) != 2 {
		t.Fatalf("SYNCLAB_SAME_RUNS=%q: want two result files", os.Getenv("SYNCLAB_SAME_RUNS"))
	}
	if err := sameRuns(files[0], files[1]); err != nil {
		t.Fatal(err)
	}
}

func TestSameRunsDetectsADifference(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.msgpack")
	run(t, nil, "", labBin, append(append([]string{"run", "lock-scaling"}, small...), "-result", a)...)
	r, err := labkit.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameRuns(a, a); err != nil {
		t.Fatalf("a file differs from itself: %v", err)
	}
	for k, v := range r.Runs[len(r.Runs)-1].Metrics {
		r.Runs[len(r.Runs)-1].Metrics[k] = math.Nextafter(v, math.Inf(1)) // one bit of one metric
		break
	}
	b := filepath.Join(dir, "b.msgpack")
	if err := labkit.Save(b, r); err != nil {
		t.Fatal(err)
	}
	if err := sameRuns(a, b); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("sameRuns after changing one metric: %v, want a difference", err)
	}
}

// TestReadmeShowsDeployFiles keeps the README's Slurm script and Kubernetes Job the files the
// tests run.
func TestReadmeShowsDeployFiles(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{slurmFile, jobFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(readme, b) {
			t.Errorf("README.md does not show deploy/%s as it is", f)
		}
	}
}

// imageUID is the uid of the Dockerfile's user (useradd --uid N).
func imageUID(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`useradd [^\n]*--uid (\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Dockerfile: no useradd --uid N")
	}
	uid, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return uid
}

// TestImageReport checks, offline in headless Chromium, the report that make test-image wrote
// inside the image (SYNCLAB_IMAGE_REPORT names the HTML file).
func TestImageReport(t *testing.T) {
	html := os.Getenv("SYNCLAB_IMAGE_REPORT")
	if html == "" {
		t.Skip("set SYNCLAB_IMAGE_REPORT=FILE.html to check a report (make test-image does)")
	}
	charts, err := nbexport.CheckInChromium(context.Background(), html)
	if err != nil {
		t.Fatal(err)
	}
	if charts == 0 {
		t.Fatalf("%s: no chart to check", html)
	}
	t.Logf("%s: %d charts drawn offline", html, charts)
}

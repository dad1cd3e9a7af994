package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"synclab/labkit"
)

var reusedRe = regexp.MustCompile(`reused (\d+) of \d+ runs from an interrupted run`)

// buildLab builds the lab command into a temporary directory.
func buildLab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// leftovers lists the temporary and journal files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, name := range storeFiles(t, dir) {
		if strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".journal") {
			out = append(out, name)
		}
	}
	return out
}

// TestChaos interrupts lab run at random moments with SIGKILL or SIGINT,
// dozens of times with a fixed seed, over a sweep of short runs (whole and
// as a shard written with -result). Each round ends with a run left to
// finish: the result it serves must be, run for run and bit for bit, the
// one an uninterrupted -fresh run computes, and no temporary or journal
// file may remain.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command and runs it many times")
	}
	bin := buildLab(t)
	args := []string{"run", "lock-scaling", "-set", "duration_ms=1", "-repeats", "3"}
	lab := func(extra ...string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, extra...)...)
		cmd.Env = append(os.Environ(), "SYNCLAB_RESULTS="+t.TempDir())
		return cmd
	}
	refDir := t.TempDir()
	refs := map[string]*labkit.Result{}
	for _, shard := range []string{"", "1/3"} {
		file := filepath.Join(refDir, "ref"+strings.ReplaceAll(shard, "/", "of")+".msgpack")
		extra := []string{"-fresh", "-result", file}
		if shard != "" {
			extra = append(extra, "-shard", shard)
		}
		start := time.Now()
		if out, err := lab(extra...).CombinedOutput(); err != nil {
			t.Fatalf("reference run: %v\n%s", err, out)
		}
		if shard == "" {
			t.Logf("an uninterrupted run takes %.2f s", time.Since(start).Seconds())
		}
		ref, err := labkit.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		refs[shard] = ref
	}

	rng := rand.New(rand.NewPCG(2024, 11))
	store := t.TempDir()
	kills, rounds, resumed, reused := 0, 15, 0, 0
	for round := range rounds {
		shard := ""
		extra := []string{"-results", store}
		served := labkit.CachePath(store, refs[""].Experiment, labkit.Shard{})
		if round%3 == 2 {
			shard = "1/3"
			served = filepath.Join(store, "part-1.msgpack")
			extra = append(extra, "-shard", shard, "-result", served)
		}
		for range 4 {
			var out bytes.Buffer
			cmd := lab(extra...)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.Int64N(int64(400 * time.Millisecond))))
			sig := syscall.SIGKILL
			if rng.IntN(2) == 0 {
				sig = syscall.SIGINT
			}
			_ = cmd.Process.Signal(sig)
			_ = cmd.Wait()
			kills++
			resumed, reused = countReused(out.String(), resumed, reused)
		}
		var out bytes.Buffer
		cmd := lab(extra...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("round %d: the completing run: %v\n%s", round, err, out.String())
		}
		res, err := labkit.Load(served)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if d := labkit.RunsDiff(res, refs[shard]); d != "" || res.Hash != refs[shard].Hash || !res.Complete {
			t.Fatalf("round %d (shard %q): the served result differs from an uninterrupted run: %s\n%s", round, shard, d, out.String())
		}
		if left := leftovers(t, store); len(left) > 0 {
			t.Fatalf("round %d: left %v", round, left)
		}
		resumed, reused = countReused(out.String(), resumed, reused)
		if err := os.Remove(served); err != nil { // the next round starts afresh
			t.Fatal(err)
		}
	}
	// Runs resumed by a process that was interrupted in turn count too: the
	// result served next came from them. (Counting the completing runs
	// only failed now and then, when in every round an interrupted process
	// had finished the result.)
	t.Logf("%d rounds, %d interruptions; %d runs resumed an interrupted one (%d runs reused)", rounds, kills, resumed, reused)
	if resumed == 0 {
		t.Fatal("no run resumed: the interruptions came too late to test anything")
	}
}

// countReused adds what a lab run's output says it reused from an
// interrupted run to resumed (runs) and reused (their reused runs).
func countReused(out string, resumed, reused int) (int, int) {
	if m := reusedRe.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		return resumed + 1, reused + n
	}
	return resumed, reused
}

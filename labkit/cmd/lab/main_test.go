package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"synclab/labkit"
	"synclab/platforms"
	"synclab/sim"
)

// The CLI's fixtures join the catalog for the tests.
func init() {
	all := experiments
	experiments = func() []platforms.Experiment {
		exps := append(all(), cliFixture(), cliDeadlock())
		slices.SortFunc(exps, func(a, b platforms.Experiment) int { return strings.Compare(a.Name, b.Name) })
		return exps
	}
}

// cliFixture has one parameter, two variants, a deterministic metric.
func cliFixture() platforms.Experiment {
	return platforms.Experiment{
		Name: "cli-fixture", Description: "CLI test fixture", Platform: "cli-bench", Repeats: 3, Seed: 7,
		Params:    platforms.Params{{Key: "n", Value: 10, Unit: "ops", Prov: platforms.MEAS, Source: "test", Min: 1, Max: 100}},
		Variants:  []platforms.Variant{{Name: "a"}, {Name: "b"}},
		Metrics:   []platforms.Metric{{Name: "cost", Unit: "ns", Better: platforms.Lower}},
		Reference: []platforms.Reference{{Article: "cli-article", Variant: "a", Metric: "cost", Value: 10, Unit: "ns", Quote: "a costs 10"}},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			c := spec.Params["n"]
			if spec.Variant == "b" {
				c *= 2
			}
			c += float64(spec.Repeat)
			return platforms.RunResult{Metrics: map[string]float64{"cost": c}}, nil
		},
	}
}

// cliDeadlock is a CLI fixture with a failing point: variant b deadlocks at n=20.
func cliDeadlock() platforms.Experiment {
	return platforms.Experiment{
		Name: "cli-deadlock", Description: "CLI fixture whose variant b deadlocks at n=20", Platform: "cli-bench", Repeats: 2, Seed: 3,
		Params:    platforms.Params{{Key: "n", Value: 10, Unit: "ops", Prov: platforms.MEAS, Source: "test", Min: 1, Max: 100}},
		Variants:  []platforms.Variant{{Name: "a"}, {Name: "b"}},
		Sweep:     []platforms.Axis{{Param: "n", Values: []float64{10, 20}}},
		Metrics:   []platforms.Metric{{Name: "cost", Unit: "ns", Better: platforms.Lower}},
		Reference: []platforms.Reference{{Article: "cli-article", Variant: "b", Metric: "cost", Value: 20, Unit: "ns", Quote: "b costs 20"}},
		Run: func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			if spec.Variant == "b" && spec.Params["n"] == 20 {
				return platforms.RunResult{}, &sim.DeadlockError{At: sim.Millisecond, Waiters: []sim.Waiter{{Proc: "worker/1", Core: 1, On: "wfe on lock"}}}
			}
			return platforms.RunResult{Metrics: map[string]float64{"cost": spec.Params["n"] + float64(spec.Repeat)}}, nil
		},
	}
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunJSON(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	code, out, stderr := runCLI(t, "run", "cli-fixture", "-json", "-set", "n=20", "-repeats", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got labkit.RunDoc
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("more than one JSON value on stdout")
	}
	if got.Schema != labkit.RunSchema || got.Experiment != "cli-fixture" || got.Seed != 7 || got.Params["n"] != 20 || len(got.Variants) != 2 ||
		got.Repeats != 4 || !got.Complete || got.Shard != "all" || len(got.Cells) != 2 || got.Runs != nil {
		t.Fatalf("unexpected output: %+v", got)
	}
	a, b := got.Variants[0], got.Variants[1]
	if a.Name != "a" || b.Name != "b" || a.Metrics["cost"] != 21.5 || b.Metrics["cost"] != 41.5 || a.CI95["cost"] == 0 {
		t.Fatalf("variants: %+v", got.Variants)
	}
	if c := got.Cells[1]; c.Variant != "b" || c.N != 4 || c.Failed != 0 || c.Metrics["cost"] != 41.5 || len(c.Params) != 0 {
		t.Fatalf("cells: %+v", got.Cells)
	}
	if len(got.Reference) != 1 || got.Reference[0].Source != "cli-article" || got.Reference[0].Value != 10 {
		t.Fatalf("reference: %+v", got.Reference)
	}
	// -runs adds every run with its seed and values.
	code, out, stderr = runCLI(t, "run", "cli-fixture", "-json", "-runs", "-set", "n=20", "-repeats", "4")
	got = labkit.RunDoc{}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Runs) != 8 {
		t.Fatalf("-runs: exit %d, %v, %d runs\n%s", code, err, len(got.Runs), stderr)
	}
	if r := got.Runs[5]; r.Variant != "b" || r.Repeat != 1 || r.Metrics["cost"] != 41 || r.Seed != labkit.RunSeed(7, "b", 1) {
		t.Fatalf("run 5: %+v", r)
	}
}

// lab run -sweep runs every point of the axis, in place of the
// experiment's own sweep over that key, and prints one cell per variant and
// point.
func TestRunSweep(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	for _, tc := range []struct {
		name  string
		args  []string
		cells map[string]float64 // variant@n: mean cost
	}{
		{"new axis", []string{"run", "cli-fixture", "-sweep", "n=5,30", "-json"}, map[string]float64{"a@5": 6, "b@5": 11, "a@30": 31, "b@30": 61}},
		{"replaces the experiment's", []string{"run", "cli-deadlock", "-sweep", "n=10,30", "-json"}, map[string]float64{"a@10": 10.5, "b@10": 10.5, "a@30": 30.5, "b@30": 30.5}},
	} {
		code, out, stderr := runCLI(t, tc.args...)
		var got labkit.RunDoc
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("%s: exit %d, %v\n%s", tc.name, code, err, stderr)
		}
		if len(got.Axes) != 1 || got.Axes[0].Param != "n" || len(got.Cells) != len(tc.cells) {
			t.Fatalf("%s: axes %+v, %d cells", tc.name, got.Axes, len(got.Cells))
		}
		for _, c := range got.Cells {
			k := fmt.Sprintf("%s@%g", c.Variant, c.Params["n"])
			if want, ok := tc.cells[k]; !ok || float64(c.Metrics["cost"]) != want || c.Failed != 0 {
				t.Errorf("%s: cell %s cost %g (failed %d), want %g", tc.name, k, c.Metrics["cost"], c.Failed, want)
			}
		}
	}
}

func TestBadInputExitStatus2(t *testing.T) {
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "list", "a", "b"}, `help: unexpected arguments ["a" "b"] (lab help COMMAND, or lab help run NAME)`},
		{[]string{"help", "run", "cli-fixture", "x"}, `help: unexpected arguments ["cli-fixture" "x"]`},
		{[]string{"run"}, "usage: lab run NAME"},
		{[]string{"run", "nope"}, "known: cli-deadlock, cli-fixture"},
		{[]string{"run", "cli-fixture", "-set", "n=1000"}, "parameter n: value 1000 out of range [1, 100]"},
		{[]string{"run", "cli-fixture", "-set", "zz=1"}, `unknown parameter "zz"; known: n`},
		{[]string{"run", "cli-fixture", "-set", "n=many"}, "not a number"},
		{[]string{"run", "cli-fixture", "-variant", "c"}, `unknown variant "c"; known: a, b`},
		{[]string{"run", "cli-fixture", "-shard", "4/2"}, "want i/n"},
		{[]string{"run", "cli-fixture", "-bogus"}, "flag provided but not defined"},
		{[]string{"run", "cli-fixture", "-repeats", "2.5"}, `-repeats "2.5": want a whole number`},
		{[]string{"run", "cli-fixture", "-json=maybe"}, `-json "maybe": want true or false`},
		{[]string{"platforms", "nowhere"}, "platforms: cli-bench"},
		{[]string{"merge", filepath.Join(t.TempDir(), "missing.msgpack")}, "missing.msgpack"},
		{[]string{"merge", ""}, "merge: an empty file name (a script's unset variable?)"},
		{[]string{"run", "lock-scaling", "-set", "cores=2.5"}, "parameter cores: value 2.5 is not a whole number"},
		{[]string{"run", "esp32-critical-section", "-set", "tasks=2.7"}, "parameter tasks: value 2.7 is not a whole number"},
		// Values each in range that do not go together: refused before any run.
		{[]string{"run", "rk3399-pingpong", "-set", "cpu_a=5", "-sweep", "cpu_b=3,4,5"}, "rk3399-pingpong: sweep point cpu_b=5: parameters cpu_a = 5 and cpu_b = 5: want two different CPUs of the 6 (0 to 5)"},
		{[]string{"run", "rk3399-wake", "-set", "holder_cpu=5", "-set", "waiter_cpu=5"}, "experiment rk3399-wake: parameters holder_cpu = waiter_cpu = 5: want two different CPUs"},
		{[]string{"run", "rk3399-spinlock-wait", "-set", "cs_us=0", "-set", "outside_us=0"}, "cs_us = 0 and outside_us = 0: a thread's cycle must take some time"},
		{[]string{"run", "rk3399-spinlock-wait", "-sweep", "cores=1,2", "-set", "irq_cpu=1"}, "sweep point cores=1: workload: irq_cpu = 1 out of range [0, 1)"},
		{[]string{"run", "lock-scaling", "-set", "cs_us=0", "-set", "outside_us=0"}, "lock-scaling: sweep point cores=1: workload: cs_us = 0 and outside_us = 0"},
		{[]string{"run", "generic-pingpong", "-set", "cpu_b=9"}, "parameters cpu_a = 0 and cpu_b = 9: want two different CPUs of the 4 (0 to 3)"},
		{[]string{"run", "esp32-critical-section", "-set", "periph_hz=100000", "-set", "periph_isr_cycles=5000"}, "the peripheral interrupt's entry, handler and exit (5300 cycles"},
		{[]string{"run", "cli-fixture", "-o", ""}, "-o: empty value"},
		{[]string{"validate", "-workers", "-2"}, "-workers -2: want at least 1"},
		{[]string{"calibrate", "m.csv", "-fit", "x", "-workers", "-1"}, "-workers -1: want at least 1"},
		{[]string{"calibrate", "m.csv", "-fit", "x", "-o", os.TempDir()}, "-o: "},
		{[]string{"platforms", "-readme", "README.md", "-md"}, "writes the Markdown tables into the file: drop -md"},
		{[]string{"claims", "-readme", "README.md", "-json"}, "-readme rewrites the file and prints one line: drop -json"},
		{[]string{"run", "cli-fixture", "-csv", "", "-json"}, "-csv: empty value"},
		{[]string{"merge", "a.msgpack", "-o", ""}, "-o: empty value"},
		{[]string{"run", "cli-fixture", "-repeats", "0"}, "-repeats 0: want at least 1"},
		{[]string{"run", "cli-fixture", "-repeats", "-3"}, "-repeats -3: want at least 1"},
		{[]string{"run", "lock-scaling", "-repeats", "1000000000"}, "4 variants x 6 sweep points x 1,000,000,000 repeats = 24,000,000,000 runs, more than the 1,000,000"},
		{[]string{"run", "cli-fixture", "-shard", "0/2", "-o", "r.html"}, "-shard writes the shard's result file only"},
		{[]string{"run", "cli-fixture", "-shard", "0/2", "-json"}, "-shard writes the shard's result file only"},
		{[]string{"run", "cli-fixture", "-runs"}, "-runs lists the runs in the JSON output: add -json"},
		{[]string{"run", "cli-fixture", "-json", "-csv", "-"}, "-json and -csv - both write stdout"},
		{[]string{"run", "cli-fixture", "-o", os.DevNull}, "-o: /dev/null is a device, not a regular file"},
		{[]string{"run", "cli-fixture", "-csv", t.TempDir()}, "is a directory, not a regular file"},
		{[]string{"merge", "-runs", "x.msgpack"}, "add -json"},
		{[]string{"run", "cli-fixture", "-sweep", "n"}, `-sweep "n": want key=v1,v2,...; keys: n`},
		{[]string{"run", "cli-fixture", "-sweep", "n=1,x"}, `-sweep n: value "x" is not a number`},
		{[]string{"run", "cli-fixture", "-sweep", "n=5,500"}, "sweep: parameter n: value 500 out of range [1, 100]"},
		{[]string{"run", "cli-fixture", "-sweep", "zz=1,2"}, `sweep over unknown parameter "zz"; known: n`},
		{[]string{"run", "cli-fixture", "-sweep", "n=1", "-sweep", "n=2"}, "-sweep n given twice"},
		{[]string{"run", "cli-fixture", "-set", "n=5", "-sweep", "n=1,2"}, "-set n=5 and -sweep n=1,2: a swept parameter takes the sweep's values"},
		{[]string{"run", "cli-fixture", "-sweep", "n=1,2", "-repeats", "300000"}, "2 variants x 2 sweep points x 300,000 repeats"},
		{[]string{"run", "cli-fixture", "-set", "n=5", "-set", "n=6"}, "-set n=5 and -set n=6: n given twice"},
		{[]string{"run", "cli-fixture", "-sweep", "n=5,5"}, "sweep of n: value 5 given twice"},
		{[]string{"run", "cli-fixture", "-variant", "a", "-variant", "a"}, "variant a named twice"},
		{[]string{"run", "cli-fixture", "-workers", "-1"}, "-workers -1: want at least 1"},
		{[]string{"list", "extra"}, `list: unexpected argument "extra"`},
		{[]string{"run", "cli-fixture", "stray"}, `run cli-fixture: unexpected argument "stray"`},
		{[]string{"platforms", "cli-bench", "a", "b"}, `platforms: unexpected arguments ["a" "b"]`},
		{[]string{"bench", "stray"}, `bench: unexpected argument "stray"`},
		{[]string{"report", "x.ipynb", "-o", "out", "-p", "Repeats=2", "-p", "Repeats=3"}, "-p Repeats=2 and -p Repeats=3: Repeats given twice"},
		{[]string{"platforms", "-readme", filepath.Join(t.TempDir(), "missing.md")}, "-readme: open "},
		{[]string{"claims", "-readme", "default.pgo"}, "-readme default.pgo: want exactly one <!-- results:begin -->"},
		{[]string{"run", "cli-fixture", "-results", "main_test.go"}, "-results main_test.go: not a directory"},
		{[]string{"bench", "-against", "HEAD", "-against-trials", "0"}, "-against-trials 0: want at least 1"},
		{[]string{"bench", "-against", "HEAD", "-against-runs", "cli-fixture,nope"}, "-against-runs: "},
		{[]string{"bench", "-against", "HEAD", "-against-runs", "cli-fixture,"}, "-against-runs cli-fixture,: an empty name in the list"},
		{[]string{"calibrate", "m.csv", "-fit", "a,"}, "-fit a,: an empty name in the list"},
		{[]string{"calibrate", "m.csv", "-fit", "a", "-metrics", ",x"}, "-metrics ,x: an empty name in the list"},
		{[]string{"calibrate", "m.csv", "-fit", "a", "-fit", "a"}, "-fit a,a: a named twice"},
		{[]string{"calibrate", "m.csv", "-fit", "a", "-metrics", "x", "-metrics", "x"}, "-metrics x,x: x named twice"},
		{[]string{"calibrate", "m.csv", "-fit", "a", "-max-evals", "0"}, "-max-evals 0: want at least 1"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, tc.want) > 1 {
			t.Errorf("lab %v: exit %d, stderr %q; want 2 and %q, once", tc.args, code, stderr, tc.want)
		}
	}
}

// lab help CMD is lab CMD -h, and every command's -h is help (exit 0), on
// stdout, so that lab help run | less shows all of it.
func TestHelpForEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"help", "run", "cli-fixture"}, {"run", "cli-fixture", "-h"}, {"help", "list"}, {"list", "-h"}, {"help", "bench"}, {"help"}} {
		code, out, stderr := runCLI(t, args...)
		if code != 0 || out == "" || stderr != "" {
			t.Errorf("lab %v: exit %d, stdout %.80q, stderr %.80q; want help on stdout and exit 0", args, code, out, stderr)
		}
	}
	// Each command's -h starts with its synopsis.
	for _, cmd := range []string{"list", "run", "merge", "platforms", "bench", "validate", "claims", "calibrate", "report"} {
		if code, out, stderr := runCLI(t, cmd, "-h"); code != 0 || !strings.HasPrefix(out, "usage: lab "+cmd) || stderr != "" {
			t.Errorf("lab %s -h: exit %d, stdout %.80q, stderr %.80q; want it to start with usage: lab %s", cmd, code, out, stderr, cmd)
		}
	}
	_, out, _ := runCLI(t, "help", "run", "cli-fixture")
	if !strings.Contains(out, "parameters of cli-fixture") {
		t.Errorf("lab help run cli-fixture: %q, want the experiment's parameters", out)
	}
}

func TestShardMergeAndReport(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		p := filepath.Join(dir, "part"+s[:1]+".msgpack")
		if code, _, stderr := runCLI(t, "run", "cli-fixture", "-shard", s, "-result", p); code != 0 {
			t.Fatalf("shard %s: %s", s, stderr)
		}
		parts = append(parts, p)
	}
	if code, _, stderr := runCLI(t, "merge", parts[0]); code != 2 || !strings.Contains(stderr, "shard 1/2 missing") {
		t.Fatalf("merge of one shard: %d %s", code, stderr)
	}
	// A shard run with other settings: the refusal names both files and
	// every setting that differs.
	other := filepath.Join(dir, "other1.msgpack")
	if code, _, stderr := runCLI(t, "run", "cli-fixture", "-shard", "1/2", "-set", "n=20", "-repeats", "4", "-result", other); code != 0 {
		t.Fatalf("shard 1/2 with -set n=20 -repeats 4: %s", stderr)
	}
	if code, _, stderr := runCLI(t, "merge", parts[0], other); code != 2 || !containsAll(stderr, parts[0]+" and "+other+": ", "different definitions of cli-fixture", "parameter n 10 vs 20", "repeats 3 vs 4") {
		t.Fatalf("merge of shards of different settings: exit %d, stderr %q; want exit 2 naming both files, parameter n and repeats", code, stderr)
	}
	merged := filepath.Join(dir, "merged.msgpack")
	code, out, stderr := runCLI(t, "merge", parts[0], parts[1], "-o", merged)
	// The time said is the longest shard's, as such: not the whole run's.
	if code != 0 || !containsAll(out, "merged 2 shards (6 runs)", "6 runs computed in 2 shards, the longest ", "Claims") {
		t.Fatalf("merge: %d %s %s", code, out, stderr)
	}
	// -o guards what it would overwrite as lab run -result does: one of the
	// shards merged, or another experiment's result, is left as it was.
	deadlock := filepath.Join(dir, "deadlock.msgpack")
	if code, _, stderr := runCLI(t, "run", "cli-deadlock", "-result", deadlock); code != 1 {
		t.Fatalf("run cli-deadlock: exit %d, want 1 (a run deadlocks): %s", code, stderr)
	}
	for _, c := range []struct{ out, want string }{
		{parts[0], "holds shard 0/2 of this run: refusing to overwrite it with the whole result"},
		{deadlock, "holds a result of cli-deadlock, not cli-fixture: refusing to overwrite it"},
	} {
		before, _ := os.ReadFile(c.out)
		code, _, stderr := runCLI(t, "merge", parts[0], parts[1], "-o", c.out)
		if after, _ := os.ReadFile(c.out); code != 2 || !strings.Contains(stderr, c.want) || !bytes.Equal(before, after) {
			t.Errorf("merge -o %s: exit %d, stderr %q; want exit 2, %q and the file unchanged", c.out, code, stderr, c.want)
		}
	}
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{merged, parts[1]}, "a complete result and shard 1/2 are not parts of one split"},
		{[]string{parts[0], deadlock}, "results of different experiments (cli-fixture vs cli-deadlock)"},
	} {
		if code, _, stderr := runCLI(t, append([]string{"merge"}, c.files...)...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("merge %v: exit %d, stderr %q; want exit 2 and %q", c.files, code, stderr, c.want)
		}
	}
	report := filepath.Join(dir, "r.html")
	if code, out, stderr := runCLI(t, "run", "cli-fixture", "-o", report); code != 0 || !strings.Contains(out, "cost (ns)") {
		t.Fatalf("run -o: %d %s %s", code, out, stderr)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "cli-fixture") {
		t.Fatalf("report: %v", err)
	}
	if code, out, _ := runCLI(t, "platforms", "cli-fixture"); code != 0 || !strings.Contains(out, "MEAS") {
		t.Fatalf("platforms: %s", out)
	}
	if code, out, _ := runCLI(t, "list"); code != 0 || !strings.Contains(out, "CLI test fixture") {
		t.Fatalf("list: %s", out)
	}
}

func TestRunWithFailedRuns(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		want   []string // on stdout
		stderr string
	}{
		{"table", nil, []string{"8 runs (2 FAILED)", "failed runs", "2 of 2 runs failed: deadlock at", "worker/1 (core 1) waits on wfe on lock",
			"cli-deadlock: 2 of 8 runs failed"}, "2 of 8 runs failed (kept the others); first: variant b, n=20, repeat 0: deadlock at"},
		{"json", []string{"-json"}, []string{`"failures": [`, `"error": "deadlock at`, `"variant": "b"`}, "2 of 8 runs failed"},
		{"variant without failures", []string{"-variant", "a"}, []string{"4 runs "}, ""},
		{"the failing point only", []string{"-set", "n=20", "-json"}, []string{`"failures": [`, `"cost": null`}, "2 of 4 runs failed (kept the others)"},
		{"all runs fail", []string{"-set", "n=20", "-variant", "b"}, []string{"2 runs (2 FAILED)", "cli-deadlock: 2 of 2 runs failed"}, "2 of 2 runs failed; first: variant b, default, repeat 0"},
	}
	for _, tc := range tests {
		t.Setenv("SYNCLAB_RESULTS", t.TempDir())
		code, out, stderr := runCLI(t, append([]string{"run", "cli-deadlock"}, tc.args...)...)
		wantCode := 1
		if tc.name == "variant without failures" {
			wantCode = 0
		}
		if code != wantCode || !containsAll(out, tc.want...) {
			t.Errorf("%s: exit %d (want %d), stdout lacks %v:\n%s\nstderr: %s", tc.name, code, wantCode, tc.want, out, stderr)
		}
		if !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: stderr %q does not count the failures", tc.name, stderr)
		}
		// With every run failed, the summary would be an empty table.
		if all := tc.name == "all runs fail"; !slices.Contains(tc.args, "-json") && all == strings.Contains(out, "cli-deadlock: mean ± 95% CI") {
			t.Errorf("%s: summary table printed %t, want %t:\n%s", tc.name, !all, !all, out)
		}
		if slices.Contains(tc.args, "-json") {
			dec := json.NewDecoder(strings.NewReader(out))
			var v map[string]any
			if err := dec.Decode(&v); err != nil || dec.More() {
				t.Errorf("%s: want exactly one JSON object: %v", tc.name, err)
			}
		}
		// A failed run is a result: the same command reads it from the
		// store and says the same.
		code2, out2, stderr2 := runCLI(t, append([]string{"run", "cli-deadlock"}, tc.args...)...)
		if code2 != code || !containsAll(out2, tc.want...) || !strings.Contains(stderr2, tc.stderr) {
			t.Errorf("%s: from the store: exit %d, stdout %s\nstderr: %s", tc.name, code2, out2, stderr2)
		}
		// With -json stdout is the JSON alone, and stderr says where it came from.
		said := out2
		if slices.Contains(tc.args, "-json") {
			said = stderr2
		}
		if !strings.Contains(said, "from the store: ") {
			t.Errorf("%s: the second run does not say it was served from the store:\nstdout %s\nstderr %s", tc.name, out2, stderr2)
		}
	}
}

// Shards with failed runs merge into the result an unsharded run gives,
// failures included, and lab merge exits with status 1 as lab run does.
func TestMergeKeepsFailedRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SYNCLAB_RESULTS", dir)
	var parts []string
	for i := range 2 {
		part := filepath.Join(dir, fmt.Sprintf("part-%d.msgpack", i))
		if code, out, stderr := runCLI(t, "run", "cli-deadlock", "-shard", fmt.Sprintf("%d/2", i), "-result", part); code != 1 || !strings.Contains(out, "written to "+part) {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, out, stderr)
		}
		parts = append(parts, part)
	}
	merged := filepath.Join(dir, "merged.msgpack")
	code, out, stderr := runCLI(t, append(append([]string{"merge"}, parts...), "-o", merged)...)
	if code != 1 || !containsAll(out, "merged 2 shards (8 runs)", "8 runs (2 FAILED)", "worker/1 (core 1) waits on wfe on lock") ||
		!strings.Contains(stderr, "2 of 8 runs failed (kept the others)") {
		t.Fatalf("merge: exit %d\n%s\nstderr: %s", code, out, stderr)
	}
	if _, _, stderr := runCLI(t, "run", "cli-deadlock", "-result", filepath.Join(dir, "whole.msgpack")); !strings.Contains(stderr, "2 of 8 runs failed") {
		t.Fatalf("unsharded run: %s", stderr)
	}
	a, errA := labkit.Load(merged)
	b, errB := labkit.Load(filepath.Join(dir, "whole.msgpack"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if d := labkit.RunsDiff(a, b); d != "" {
		t.Fatalf("merged shards differ from the unsharded run: %s", d)
	}
}

func TestRunHelpListsParametersAndVariants(t *testing.T) {
	for _, args := range [][]string{{"run", "cli-fixture", "-h"}, {"run", "-h", "cli-fixture"}, {"run", "cli-fixture", "-set", "n=3", "-help"}} {
		code, out, stderr := runCLI(t, args...)
		if code != 0 || !containsAll(out, "cli-fixture (platform cli-bench)", "key", "default", "unit", "prov", "accepted",
			"n    10       ops   MEAS  [1, 100]", "variants of cli-fixture", "metrics: cost (ns)", "-set value") || stderr != "" {
			t.Errorf("lab %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, stderr)
		}
	}
	if code, out, _ := runCLI(t, "run", "cli-deadlock", "-h"); code != 0 || !strings.Contains(out, "sweeps n over 10, 20") {
		t.Errorf("sweep not listed: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "run", "-h"); code != 0 || strings.Contains(out, "parameters of") {
		t.Errorf("lab run -h without a name: exit %d, stdout %q", code, out)
	}
	if code, _, stderr := runCLI(t, "run", "nope", "-h"); code != 2 || !strings.Contains(stderr, `unknown experiment "nope"`) {
		t.Errorf("lab run nope -h: exit %d, %s", code, stderr)
	}
}

func TestBenchSweepIsShort(t *testing.T) {
	tests := []struct {
		name      string
		sets      []string
		exp       string
		wantLabel string
		duration  float64
	}{
		{"", nil, "rk3399-spinlock-wait", "rk3399-spinlock-wait variant wfe duration_ms=300", 300},
		{"", []string{"duration_ms=5"}, "rk3399-spinlock-wait", "rk3399-spinlock-wait variant wfe duration_ms=5", 5},
		{"cli-fixture", nil, "cli-fixture", "cli-fixture variant a", 0},
	}
	for _, tc := range tests {
		e, label, err := sweepConfig(tc.name, tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		if e.Name != tc.exp || label != tc.wantLabel || e.Repeats != 64 || len(e.Variants) != 1 || len(e.Sweep) != 0 {
			t.Errorf("sweepConfig(%q, %v) = %s %q repeats %d variants %d sweep %d", tc.name, tc.sets, e.Name, label, e.Repeats, len(e.Variants), len(e.Sweep))
		}
		if d := e.Params.Values()["duration_ms"]; tc.duration > 0 && d != tc.duration {
			t.Errorf("sweepConfig(%q, %v): duration_ms %g, want %g", tc.name, tc.sets, d, tc.duration)
		}
	}
	if _, _, err := sweepConfig("", []string{"duration_ms=0"}); err == nil {
		t.Error("an out-of-range -sweep-set must fail")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestInterruptedExitStatus: a run stopped by its context exits with 128
// plus the number of the signal that stopped it, the status a shell gives a
// process the signal killed (130 for Ctrl-C, 143 for SIGTERM), not 1:
// scripts and batch schedulers tell an interrupted run from a failed one by
// it. A cancellation without a signal counts as Ctrl-C.
func TestInterruptedExitStatus(t *testing.T) {
	for _, c := range []struct {
		cause error
		code  int
		says  string
	}{
		{nil, 130, "context canceled"},
		{stoppedBy{syscall.SIGINT}, 130, "stopped by SIGINT (Ctrl-C)"},
		{stoppedBy{syscall.SIGTERM}, 143, "stopped by SIGTERM"},
	} {
		t.Setenv("SYNCLAB_RESULTS", t.TempDir())
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(c.cause)
		var out, errb bytes.Buffer
		if code := run(ctx, []string{"run", "cli-fixture", "-repeats", "2"}, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.says) {
			t.Errorf("cause %v: exit %d, stderr %q; want %d and %q", c.cause, code, errb.String(), c.code, c.says)
		}
	}
}

// TestSignalStopsTheCommand sends the built lab SIGINT and SIGTERM during a
// run: each stops it with its own status and says which signal did.
func TestSignalStopsTheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command")
	}
	bin := buildLab(t)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		var errb bytes.Buffer
		cmd := exec.Command(bin, "run", "lock-scaling", "-fresh", "-repeats", "20")
		cmd.Env = append(os.Environ(), "SYNCLAB_RESULTS="+t.TempDir())
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // past the handler's installation
		if err := cmd.Process.Signal(c.sig); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if got := cmd.ProcessState.ExitCode(); got != c.code || strings.Count(errb.String(), "stopped by "+c.says) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and the signal named once", c.sig, got, errb.String(), c.code)
		}
	}
}

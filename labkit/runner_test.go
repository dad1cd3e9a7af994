package labkit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"synclab/platforms"
	"synclab/sim"
)

func sweptFixture(t testing.TB) platforms.Experiment {
	t.Helper()
	e, err := fixture().WithSweep("work", 50, 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRunnerDeterministicAcrossGOMAXPROCS(t *testing.T) {
	e := sweptFixture(t)
	var tables [][]row
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		res, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || len(res.Runs) != 2*3*5 {
			t.Fatalf("GOMAXPROCS %d: complete=%v runs=%d, want 30", procs, res.Complete, len(res.Runs))
		}
		tables = append(tables, tidy(res))
	}
	for i := 1; i < len(tables); i++ {
		if !reflect.DeepEqual(tables[0], tables[i]) {
			t.Fatalf("tidy tables differ between GOMAXPROCS 1 and run %d", i)
		}
	}
	if len(tables[0]) != 60 {
		t.Fatalf("tidy rows = %d, want 60", len(tables[0]))
	}
}

func TestRunSeedsDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for _, seed := range []uint64{1, 2} {
		for _, v := range []string{"a", "b"} {
			for r := range 10 {
				s := RunSeed(seed, v, r)
				if seen[s] {
					t.Fatalf("seed collision at %d %s %d", seed, v, r)
				}
				seen[s] = true
			}
		}
	}
	// Golden values: every stored result and every bit-identical claim rests
	// on this derivation, so changing it must show here. The first is also
	// format 1's seed of its first point.
	if a, b := RunSeed(1, "a", 0), RunSeed(42, "wfe", 7); a != 18377786037655687604 || b != 12705681367802185221 {
		t.Fatalf("RunSeed changed: %d, %d", a, b)
	}
}

// TestPointResultsIgnoreTheSweep: a point's runs are the same whichever
// sweep holds it, in whatever order, and the same as a run set to its
// values: a reader who adds a point to a sweep, or reorders it, keeps the
// numbers of the others.
func TestPointResultsIgnoreTheSweep(t *testing.T) {
	at200 := func(e platforms.Experiment) map[string]Run {
		t.Helper()
		res, err := Execute(context.Background(), e, RunOptions{Progress: NoProgress})
		if err != nil {
			t.Fatal(err)
		}
		runs := map[string]Run{}
		for _, r := range res.Runs {
			if res.Experiment.PointParams(r.Point)["work"] == 200 {
				r.Point = 0 // its position is the only thing allowed to differ
				runs[fmt.Sprint(r.Variant, r.Repeat)] = r
			}
		}
		if len(runs) != 10 {
			t.Fatalf("%d runs at work=200, want 10", len(runs))
		}
		return runs
	}
	up, err := fixture().WithSweep("work", 50, 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	down, err := fixture().WithSweep("work", 200, 50)
	if err != nil {
		t.Fatal(err)
	}
	set, err := fixture().With("work", 200)
	if err != nil {
		t.Fatal(err)
	}
	want := at200(up)
	for name, e := range map[string]platforms.Experiment{"the sweep reversed": down, "-set work=200": set} {
		if got := at200(e); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the runs at work=200 differ from the sweep 50,100,200's", name)
		}
	}
}

func TestRunnerCancelKeepsFinishedRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	run := func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		if n.Add(1) == 4 {
			cancel()
			return platforms.RunResult{}, ctx.Err()
		}
		return fixtureRun(ctx, spec)
	}
	res, err := Execute(ctx, withRun(fixture(), run), RunOptions{Workers: 1, Progress: NoProgress})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Complete || len(res.Runs) != 3 {
		t.Fatalf("want 3 finished runs in an incomplete result, got %+v", res)
	}
}

// deadlockAt is a RunFunc that fails like a simulated deadlock for variant
// slow at the sweep point work=200 (every repeat) and runs fixtureRun
// elsewhere.
func deadlockAt(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
	if spec.Variant == "slow" && spec.Params["work"] == 200 {
		return platforms.RunResult{}, &sim.DeadlockError{At: 474 * sim.Microsecond,
			Waiters: []sim.Waiter{{Proc: "worker/1", Core: 1, On: "wfe on lock 0x1000"}}}
	}
	return fixtureRun(ctx, spec)
}

func TestRunnerKeepsOtherRunsWhenOneFails(t *testing.T) {
	tests := []struct {
		name string
		run  platforms.RunFunc
		// wantFailed runs fail, all of variant failVariant at point
		// failPoint (5 repeats per point).
		wantFailed  int
		failVariant string
		failPoint   int
		want        []string // in the error and in every failed run's Err
	}{
		{"deadlock at one point", deadlockAt, 5, "slow", 2, []string{"deadlock at", "worker/1 (core 1) waits on wfe on lock 0x1000"}},
		{"one repeat fails", func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			if spec.Variant == "fast" && spec.Params["work"] == 50 && spec.Repeat == 2 {
				return platforms.RunResult{}, errors.New("boom")
			}
			return fixtureRun(ctx, spec)
		}, 1, "fast", 0, []string{"boom"}},
		{"missing metric at one point", func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			r, err := fixtureRun(ctx, spec)
			if spec.Variant == "fast" && spec.Params["work"] == 100 {
				delete(r.Metrics, "ops_s")
			}
			return r, err
		}, 5, "fast", 1, []string{"did not report metric ops_s"}},
	}
	e := sweptFixture(t)
	whole, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		res, err := Execute(context.Background(), withRun(e, tc.run), RunOptions{Progress: NoProgress})
		var rf *RunsFailedError
		if !errors.As(err, &rf) || rf.Failed != tc.wantFailed || rf.Total != 30 || !containsAll(err.Error(), append([]string{"variant " + tc.failVariant}, tc.want...)...) {
			t.Fatalf("%s: err = %v, want %d of 30 failed naming %v", tc.name, err, tc.wantFailed, tc.want)
		}
		if res == nil || !res.Complete || len(res.Runs) != 30 || len(res.Failures()) != tc.wantFailed {
			t.Fatalf("%s: want all 30 runs kept, %d failed, complete; got %d runs, %d failed, complete %v",
				tc.name, tc.wantFailed, len(res.Runs), len(res.Failures()), res.Complete)
		}
		for _, f := range res.Failures() {
			if f.Variant != tc.failVariant || f.Point != tc.failPoint || f.Metrics != nil || !containsAll(f.Err, tc.want...) {
				t.Errorf("%s: failed run %+v", tc.name, f)
			}
		}
		// Statistics use the successful runs only, and they equal the
		// ones of a run without failures.
		if s := res.Summary(tc.failVariant, tc.failPoint, "time_ms"); s.N != 5-tc.wantFailed {
			t.Errorf("%s: summary over %d runs, want %d", tc.name, s.N, 5-tc.wantFailed)
		}
		if got, want := res.Summary("slow", 0, "ops_s"), whole.Summary("slow", 0, "ops_s"); got != want {
			t.Errorf("%s: an unaffected point changed: %+v vs %+v", tc.name, got, want)
		}
		if n := len(tidy(res)); n != 2*(30-tc.wantFailed) {
			t.Errorf("%s: tidy rows %d, want %d", tc.name, n, 2*(30-tc.wantFailed))
		}
		var buf strings.Builder
		SummaryTable(res).WriteText(&buf)
		FailuresTable(res).WriteText(&buf)
		if !containsAll(buf.String(), "failed runs", fmt.Sprintf("%d of 5 runs failed: ", tc.wantFailed), tc.want[0],
			fmt.Sprintf("%d of 30 runs failed", tc.wantFailed)) {
			t.Errorf("%s: tables do not show the failures:\n%s", tc.name, buf.String())
		}
		if h := ResultReport(res).HTML(); !containsAll(h, tc.want[0], fmt.Sprintf("%d failed", tc.wantFailed)) {
			t.Errorf("%s: report does not show the failures", tc.name)
		}
	}
}

// A failed run (a simulated deadlock) is a result like the others, since a
// run is a function of its definition, seed and code: it is journaled,
// cached and merged, and every call that returns it reports the same
// RunsFailedError, computed or read.
func TestFailedRunsAreJournaledCachedAndMerged(t *testing.T) {
	e := withRun(sweptFixture(t), deadlockAt) // the last 5 of 30 runs deadlock
	whole, wantErr := Execute(context.Background(), e, RunOptions{Progress: NoProgress})
	var rf *RunsFailedError
	if !errors.As(wantErr, &rf) || rf.Failed != 5 || rf.Total != 30 || !whole.Complete {
		t.Fatalf("Execute: %v, complete %v", wantErr, whole.Complete)
	}
	dir := t.TempDir()
	var log strings.Builder
	opts := RunOptions{Dir: dir, Progress: NoProgress, Log: &log}
	interrupted(t, e, opts, 27) // 25 runs, then 2 of the failing ones
	path := CachePath(dir, e, Shard{})
	var calls atomic.Int32
	count := func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		calls.Add(1)
		return deadlockAt(ctx, spec)
	}
	for i, want := range []struct {
		calls, reused int32
		from          string
	}{{3, 27, ""}, {3, 0, path}} { // resumed from the journal, then read from the store
		res, err := RunExperiment(context.Background(), withRun(e, count), opts)
		if err == nil || err.Error() != wantErr.Error() {
			t.Fatalf("call %d: err = %v, want %v", i, err, wantErr)
		}
		if calls.Load() != want.calls || int32(res.Reused) != want.reused || res.From != want.from || !res.Complete {
			t.Fatalf("call %d: computed %d runs, reused %d, from %q, complete %v; want %d, %d, %q, true",
				i, calls.Load(), res.Reused, res.From, res.Complete, want.calls, want.reused, want.from)
		}
		if d := RunsDiff(res, whole); d != "" {
			t.Fatalf("call %d: differs from one uninterrupted computation: %s", i, d)
		}
	}
	assertOnly(t, dir, filepath.Base(path))
	if !strings.Contains(log.String(), "reused 27 of 30 runs from an interrupted run") {
		t.Errorf("log does not say what was reused: %q", log.String())
	}
	var parts []*Result
	for i := range 2 {
		p, _ := Execute(context.Background(), e, RunOptions{Shard: Shard{Index: i, Count: 2}, Progress: NoProgress})
		parts = append(parts, p)
	}
	merged, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if d := RunsDiff(merged, whole); d != "" || merged.RunsFailed() == nil || merged.RunsFailed().Error() != wantErr.Error() {
		t.Fatalf("merged shards: %s; %v, want %v", d, merged.RunsFailed(), wantErr)
	}
}

func TestShardsPartitionJobs(t *testing.T) {
	e := sweptFixture(t)
	var parts []*Result
	for i := range 3 {
		r, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Shard: Shard{Index: i, Count: 3}, Progress: NoProgress})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r)
	}
	whole, err := Execute(context.Background(), withRun(e, fixtureRun), RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(parts[2], parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tidy(merged), tidy(whole)) {
		t.Fatal("merged shards differ from the whole run")
	}
	for _, bad := range [][]*Result{{parts[0], parts[1]}, {parts[0], parts[0], parts[1], parts[2]}} {
		if _, err := Merge(bad...); err == nil {
			t.Fatalf("Merge accepted %d parts with a missing or duplicate shard", len(bad))
		}
	}
	// The error says which shard is given twice, not only that the union
	// is wrong.
	if _, err := Merge(parts[0], parts[1], parts[1], parts[2]); err == nil || !containsAll(err.Error(), "shard 1/3 given twice") {
		t.Fatalf("Merge of a duplicate shard: err = %v, want it named", err)
	}
	// Shards computed by different code do not make one result.
	stale := *parts[1]
	stale.Code = CodeVersion{Commit: "0123456789abcdef", Source: "fedcba9876543210fedcba9876543210", Go: "go1.0"}
	if _, err := Merge(parts[0], &stale, parts[2]); err == nil || !containsAll(err.Error(), "different code", parts[0].Code.String(), stale.Code.String()) {
		t.Fatalf("Merge of shards of different code: err = %v", err)
	}
	other, _ := e.With("noise", 0.2)
	foreign, _ := Execute(context.Background(), withRun(other, fixtureRun), RunOptions{Shard: Shard{Index: 1, Count: 3}, Progress: NoProgress})
	// The refusal names the setting that differs and, for the caller to
	// name files, which parts.
	_, err = Merge(parts[0], foreign, parts[2])
	if me := (*MergeError)(nil); !errors.As(err, &me) || !slices.Equal(me.Parts, []int{0, 1}) || !containsAll(err.Error(), "different definitions", "parameter noise 0.1 vs 0.2") {
		t.Fatalf("Merge of different definitions: err = %v, want a *MergeError about parts 0 and 1 naming parameter noise", err)
	}
	if _, err := Merge(parts[0], parts[1], parts[1], parts[2]); !errors.As(err, new(*MergeError)) || !slices.Equal(err.(*MergeError).Parts, []int{1, 2}) {
		t.Fatalf("Merge of a duplicate shard: err = %v, want a *MergeError about parts 1 and 2", err)
	}
	for _, s := range []string{"3/3", "-1/2", "a/b", "1", "0/4abc", "1/2/3", "0x/2", "1/", "0/0"} { // 0/0 would be the zero Shard: all runs
		if _, err := ParseShard(s); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
			t.Errorf("ParseShard(%q): err %v, want it to name the value", s, err)
		}
	}
	if sh, err := ParseShard("2/4"); err != nil || sh != (Shard{Index: 2, Count: 4}) {
		t.Errorf("ParseShard(2/4) = %v, %v", sh, err)
	}
}

func TestRunCountBound(t *testing.T) {
	e := sweptFixture(t) // 2 variants x 3 points
	if n, err := RunCount(e); n != 30 || err != nil {
		t.Fatalf("RunCount = %d, %v, want 30", n, err)
	}
	e.Repeats = MaxRuns / 6
	if n, err := RunCount(e); n != MaxRuns/6*6 || err != nil {
		t.Fatalf("RunCount at the bound = %d, %v", n, err)
	}
	e.Repeats = 1_000_000_000
	var calls atomic.Int32
	_, err := Execute(context.Background(), withRun(e, counted(&calls)), RunOptions{Progress: NoProgress})
	if err == nil || !containsAll(err.Error(), "2 variants x 3 sweep points x 1,000,000,000 repeats = 6,000,000,000 runs", "more than the 1,000,000", "lower the repeats") || calls.Load() != 0 {
		t.Fatalf("1e9 repeats: %v (computed %d runs)", err, calls.Load())
	}
	// A sweep whose point count overflows int is refused too.
	big := fixture()
	for _, k := range []string{"work", "noise", "slowdown"} {
		vals := make([]float64, 70000)
		for i := range vals {
			vals[i] = 1 + float64(i)/1e5
		}
		big.Sweep = append(big.Sweep, platforms.Axis{Param: k, Values: vals})
	}
	if _, err := RunCount(big); err == nil {
		t.Fatal("RunCount accepted 70000^3 sweep points")
	}
}

// Values that do not go together (the experiment's Check) are refused
// before any run, naming the sweep point, rather than failing run by run.
func TestRunRefusesPointsCheckRefuses(t *testing.T) {
	var calls atomic.Int32
	e := withRun(sweptFixture(t), counted(&calls))
	e.Check = func(v map[string]float64) error {
		if v["work"] > v["hz"] {
			return fmt.Errorf("work = %g and hz = %g: too much work per period", v["work"], v["hz"])
		}
		return nil
	}
	_, err := RunExperiment(context.Background(), e, RunOptions{Dir: t.TempDir(), Progress: NoProgress})
	if err == nil || !strings.Contains(err.Error(), "sweep point work=200: work = 200 and hz = 100: too much work per period") || calls.Load() != 0 {
		t.Fatalf("RunExperiment: %v (computed %d runs), want the point refused before any run", err, calls.Load())
	}
	if e, _ = e.WithSweep("hz", 250); e.Check == nil {
		t.Fatal("WithSweep dropped Check")
	}
	if _, err := Execute(context.Background(), e, RunOptions{Progress: NoProgress}); err != nil || calls.Load() != 30 {
		t.Fatalf("at hz=250: %v after %d runs, want all 30", err, calls.Load())
	}
}

// A cancel stops a large run at once: the workers take no new run, the
// running ones see the cancelled context, and every run that finished is in
// the result.
func TestCancelStopsALargeRun(t *testing.T) {
	e := sweptFixture(t)
	e.Repeats = MaxRuns / 6
	ctx, cancel := context.WithCancel(context.Background())
	var calls, finished atomic.Int32
	interrupt := interruptAfter(50, cancel, &calls, fixtureRun)
	run := func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		r, err := interrupt(ctx, spec)
		if err == nil {
			finished.Add(1)
		}
		return r, err
	}
	res, err := RunExperiment(ctx, withRun(e, run), RunOptions{Dir: t.TempDir(), Progress: NoProgress, Log: &strings.Builder{}})
	workers := int32(runtime.GOMAXPROCS(0))
	if !errors.Is(err, context.Canceled) || res == nil || int32(len(res.Runs)) != finished.Load() ||
		finished.Load() < 50-workers || calls.Load() > 50+workers {
		t.Fatalf("cancelled: %v, %d runs kept of %d finished, %d calls (%d workers)", err, len(res.Runs), finished.Load(), calls.Load(), workers)
	}
}

// A cached result takes the current definition's prose and reference
// numbers (which do not change runs): the claims never show an old
// article value.
func TestCacheHitServesTheCurrentReferences(t *testing.T) {
	dir := t.TempDir()
	opts := RunOptions{Dir: dir, Progress: NoProgress}
	var calls atomic.Int32
	e := withRun(fixture(), counted(&calls))
	if _, err := RunExperiment(context.Background(), e, opts); err != nil {
		t.Fatal(err)
	}
	e.Reference[0].Value = 0.5
	e.Description = "edited prose"
	res, err := RunExperiment(context.Background(), e, opts)
	if err != nil || res.From == "" || calls.Load() != 10 {
		t.Fatalf("want a cache hit: %v, computed %d", err, calls.Load())
	}
	if c := res.Claims()[0]; c.Sides[0].Article != 0.5 || res.Experiment.Description != "edited prose" || res.Experiment.Run != nil {
		t.Fatalf("claims of a cache hit use the cached reference: %+v", c.Sides[0])
	}
}

func TestRunsDiff(t *testing.T) {
	a := fixtureResult(t)
	b := fixtureResult(t)
	if d := RunsDiff(a, b); d != "" {
		t.Fatalf("two computations differ: %s", d)
	}
	c := *b
	c.Runs = slices.Clone(b.Runs)
	c.Runs[4].Samples = map[string][]float64{"latency_us": slices.Clone(b.Runs[4].Samples["latency_us"])}
	c.Runs[4].Samples["latency_us"][7] = math.Nextafter(c.Runs[4].Samples["latency_us"][7], 0)
	if d := RunsDiff(a, &c); !strings.Contains(d, "run 4: samples latency_us[7]") {
		t.Fatalf("RunsDiff = %q, want the changed sample", d)
	}
	c.Runs = c.Runs[1:]
	if d := RunsDiff(a, &c); d != "30 runs vs 29" {
		t.Fatalf("RunsDiff = %q", d)
	}
}

// An interrupted batch says where each run in progress stood, as its run
// function said when it stopped: a run that seemed to hang (a workload
// that never ends) then shows the simulated time it had reached.
func TestInterruptSaysWhereRunsStood(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	hang := func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
		if calls.Add(1) == 3 {
			cancel()
			<-ctx.Done()
			return platforms.RunResult{}, fmt.Errorf("simulation stopped at simulated time 2.5s: %w", ctx.Err())
		}
		return fixtureRun(ctx, spec)
	}
	_, err := Execute(ctx, withRun(fixture(), hang), RunOptions{Workers: 1, Progress: NoProgress})
	want := "interrupted after 2 of 10 runs: context canceled; in progress: fast (point 0, repeat 2): simulation stopped at simulated time 2.5s"
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want it to contain %q", err, want)
	}
}

package labkit

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
)

func sweptFixture(t *testing.T) Experiment {
	t.Helper()
	e, err := fixture().WithSweep("work", 50, 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRunnerDeterministicAcrossGOMAXPROCS(t *testing.T) {
	e := sweptFixture(t)
	var tables [][]Row
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		res, err := Execute(context.Background(), e, fixtureRun, RunOptions{Progress: NoProgress})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || len(res.Runs) != 2*3*5 {
			t.Fatalf("GOMAXPROCS %d: complete=%v runs=%d, want 30", procs, res.Complete, len(res.Runs))
		}
		tables = append(tables, res.Tidy())
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
	for _, v := range []string{"a", "b"} {
		for p := range 10 {
			for r := range 10 {
				s := RunSeed(1, v, p, r)
				if seen[s] {
					t.Fatalf("seed collision at %s %d %d", v, p, r)
				}
				seen[s] = true
			}
		}
	}
	if RunSeed(1, "a", 0, 0) != RunSeed(1, "a", 0, 0) || RunSeed(1, "a", 0, 0) == RunSeed(2, "a", 0, 0) {
		t.Fatal("RunSeed not a function of its inputs")
	}
}

func TestRunnerCancelKeepsFinishedRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	run := func(ctx context.Context, spec RunSpec) (RunResult, error) {
		if n.Add(1) == 4 {
			cancel()
			return RunResult{}, ctx.Err()
		}
		return fixtureRun(ctx, spec)
	}
	res, err := Execute(ctx, fixture(), run, RunOptions{Workers: 1, Progress: NoProgress})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Complete || len(res.Runs) != 3 {
		t.Fatalf("want 3 finished runs in an incomplete result, got %+v", res)
	}
}

func TestRunnerReportsFailingRun(t *testing.T) {
	run := func(ctx context.Context, spec RunSpec) (RunResult, error) {
		if spec.Variant == "slow" && spec.Repeat == 2 {
			return RunResult{}, errors.New("boom")
		}
		return fixtureRun(ctx, spec)
	}
	_, err := Execute(context.Background(), fixture(), run, RunOptions{Progress: NoProgress})
	if err == nil || !containsAll(err.Error(), "variant slow", "repeat 2", "boom") {
		t.Fatalf("err = %v", err)
	}
	missing := func(ctx context.Context, spec RunSpec) (RunResult, error) {
		return RunResult{Metrics: map[string]float64{"time_ms": 1}}, nil
	}
	if _, err := Execute(context.Background(), fixture(), missing, RunOptions{Progress: NoProgress}); err == nil || !containsAll(err.Error(), "ops_s") {
		t.Fatalf("missing metric: err = %v", err)
	}
}

func TestShardsPartitionJobs(t *testing.T) {
	e := sweptFixture(t)
	var parts []*Result
	for i := range 3 {
		r, err := Execute(context.Background(), e, fixtureRun, RunOptions{Shard: Shard{Index: i, Count: 3}, Progress: NoProgress})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r)
	}
	whole, err := Execute(context.Background(), e, fixtureRun, RunOptions{Progress: NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(parts[2], parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(merged.Tidy(), whole.Tidy()) {
		t.Fatal("merged shards differ from the whole run")
	}
	for _, bad := range [][]*Result{{parts[0], parts[1]}, {parts[0], parts[0], parts[1], parts[2]}} {
		if _, err := Merge(bad...); err == nil {
			t.Fatalf("Merge accepted %d parts with a missing or duplicate shard", len(bad))
		}
	}
	other, _ := e.With("noise", 0.2)
	foreign, _ := Execute(context.Background(), other, fixtureRun, RunOptions{Shard: Shard{Index: 1, Count: 3}, Progress: NoProgress})
	if _, err := Merge(parts[0], foreign, parts[2]); err == nil || !containsAll(err.Error(), "different definitions") {
		t.Fatalf("Merge of different definitions: err = %v", err)
	}
	for _, s := range []string{"3/3", "-1/2", "a/b", "1"} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
}

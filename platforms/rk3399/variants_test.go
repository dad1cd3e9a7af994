package rk3399

import (
	"context"
	"strings"
	"testing"

	"synclab/platforms"
)

// runVariant runs variant of e at its first sweep point with set changing the
// defaults.
func runVariant(t *testing.T, e platforms.Experiment, variant string, set map[string]float64) map[string]float64 {
	t.Helper()
	params := e.PointParams(0)
	for k, v := range set {
		params[k] = v
	}
	rr, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: variant, Params: params, Seed: 5})
	if err != nil {
		t.Fatalf("%s/%s: %v", e.Name, variant, err)
	}
	return rr.Metrics
}

// per-cpu-split's variants contend as their locks are shared: each CPU's
// own lock only with the interrupt handler on cpu0, a cluster's lock among
// its CPUs, the global lock among all six. Kills a variant built with
// another variant's locks (percluster as percpu, or as global).
func TestSplitVariantsContendAsTheirLocksAreShared(t *testing.T) {
	e := perCPUSplit()
	set := map[string]float64{"duration_ms": 50}
	cpu, cluster, global := runVariant(t, e, "percpu", set), runVariant(t, e, "percluster", set), runVariant(t, e, "global", set)
	if !(cpu["contended_pct"] < cluster["contended_pct"] && cluster["contended_pct"] < global["contended_pct"]) {
		t.Errorf("contended: percpu %g%%, percluster %g%%, global %g%%; want them in that order, rising",
			cpu["contended_pct"], cluster["contended_pct"], global["contended_pct"])
	}
	if wfi := runVariant(t, e, "global-wfi", set); wfi["wakeups_event"] != 0 || wfi["avg_lock_wait_ms"] < 10*global["avg_lock_wait_ms"] {
		t.Errorf("global-wfi: %g event wake-ups (want 0: a release never wakes WFI), mean wait %g ms (want far above WFE's %g ms)",
			wfi["wakeups_event"], wfi["avg_lock_wait_ms"], global["avg_lock_wait_ms"])
	}
}

// lock-scaling waits as its wait parameter says: only WFE-based policies
// are woken by events, WFI waits for the tick, relax never sleeps. Kills
// the parameter being ignored.
func TestLockScalingWaitPolicies(t *testing.T) {
	e := lockScaling()
	wait := func(w float64) map[string]float64 {
		return runVariant(t, e, "qspinlock", map[string]float64{"cores": 4, "duration_ms": 5, "wait": w})
	}
	wfe, wfi, relax, adaptive := wait(0), wait(1), wait(2), wait(3)
	if wfe["wakeups_event"] == 0 || adaptive["wakeups_event"] >= wfe["wakeups_event"] {
		t.Errorf("event wake-ups: wfe %g, adaptive %g; want wfe's > adaptive's (which polls first)", wfe["wakeups_event"], adaptive["wakeups_event"])
	}
	if relax["wakeups_event"]+relax["wakeups_event_stream"] != 0 || wfi["wakeups_event"] != 0 {
		t.Errorf("relax woke %g times, wfi %g times by events; want neither", relax["wakeups_event"]+relax["wakeups_event_stream"], wfi["wakeups_event"])
	}
	if wfi["avg_lock_wait_ms"] < 100*wfe["avg_lock_wait_ms"] {
		t.Errorf("mean wait: wfi %g ms, wfe %g ms; want WFI's, which lasts to the next tick, far longer", wfi["avg_lock_wait_ms"], wfe["avg_lock_wait_ms"])
	}
}

// Bad variants and parameter values are errors naming them, from every
// experiment; a traced run carries its trace.
func TestExperimentsRejectBadInput(t *testing.T) {
	for _, e := range Experiments() {
		spec := platforms.RunSpec{Experiment: e.Name, Variant: "no-such", Params: e.PointParams(0), Seed: 1}
		if _, err := e.Run(context.Background(), spec); err == nil || !strings.Contains(err.Error(), `"no-such"`) {
			t.Errorf("%s: variant no-such: error %v, want one naming it", e.Name, err)
		}
	}
	for _, tc := range []struct {
		e       platforms.Experiment
		variant string
		key     string
		value   float64
	}{
		{spinlockWait(), "wfe", "load", 2},
		{perCPUSplit(), "global", "cores", 7},
		{lockScaling(), "ticket", "cores", 65},
		{lockScaling(), "ticket", "wait", 6},
	} {
		params := tc.e.PointParams(0)
		params[tc.key] = tc.value
		_, err := tc.e.Run(context.Background(), platforms.RunSpec{Experiment: tc.e.Name, Variant: tc.variant, Params: params, Seed: 1})
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %s = %g: error %v, want one naming %s", tc.e.Name, tc.key, tc.value, err, tc.key)
		}
	}
	for _, e := range []platforms.Experiment{spinlockWait(), perCPUSplit(), lockScaling()} {
		params := e.PointParams(0)
		params["duration_ms"] = 25
		rr, err := e.Run(context.Background(), platforms.RunSpec{Experiment: e.Name, Variant: e.Variants[0].Name, Params: params, Seed: 1, Trace: true})
		if err != nil || rr.Trace == nil || len(rr.Trace.Spans) == 0 {
			t.Errorf("%s traced: %v, trace %v", e.Name, err, rr.Trace)
		}
	}
}

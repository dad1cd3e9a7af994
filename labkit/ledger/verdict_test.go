package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/labkit/catalog"
	"synclab/platforms"
)

// world gives every metric of every run of a ledger one value: set's, keyed
// "run/variant/metric" or, at a sweep point, "run/variant/metric@key=value";
// 1 for the others.
type world map[string]float64

func (w world) value(run, variant, metric string, pt map[string]float64) float64 {
	for k, v := range pt {
		if x, ok := w[fmt.Sprintf("%s/%s/%s@%s=%g", run, variant, metric, k, v)]; ok {
			return x
		}
	}
	if x, ok := w[run+"/"+variant+"/"+metric]; ok {
		return x
	}
	return 1
}

// results builds the results of every run of l in world w, without
// simulating.
func (w world) results(t *testing.T, l Ledger) map[string]*labkit.Result {
	t.Helper()
	return resultsOf(t, l, func(r Run, e platforms.Experiment, variant string, point int) (map[string]float64, string) {
		m := map[string]float64{}
		for _, mt := range e.Metrics {
			m[mt.Name] = w.value(r.Name, variant, mt.Name, e.Point(point))
		}
		return m, ""
	})
}

// Verdicts follow the numbers the way each claim's "how" says, worked out
// by hand for a few claims of each article: the same judge gives holds,
// partly or contradicted as the numbers cross its thresholds. Kills a judge
// with a comparison inverted or a threshold on the wrong side.
func TestVerdictsFollowTheNumbers(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		claim string
		w     world
		want  Verdict
	}{
		// The article: notify's worst interrupt latency below the mutex's.
		{"esp-table-irq", world{"esp-main/notify/max_irq_latency_us": 8, "esp-main/mutex/max_irq_latency_us": 15}, Holds},
		{"esp-table-irq", world{"esp-main/notify/max_irq_latency_us": 30, "esp-main/mutex/max_irq_latency_us": 15}, Contradicted},
		// The rule: notify faster below 10 µs and with two tasks, slower
		// elsewhere, holds; faster everywhere is partly; never, contradicted.
		{"esp-rule", world{"esp-cs/notify/ns_per_op@cs_cycles=0": 0.5, "esp-cs/notify/ns_per_op@cs_cycles=480": 0.6,
			"esp-cs/notify/ns_per_op": 2, "esp-tasks/notify/ns_per_op@tasks=2": 0.5, "esp-tasks/notify/ns_per_op@tasks=4": 2}, Holds},
		{"esp-rule", world{"esp-cs/notify/ns_per_op": 0.5, "esp-tasks/notify/ns_per_op": 0.5}, Partly},
		{"esp-rule", world{"esp-cs/notify/ns_per_op": 2, "esp-tasks/notify/ns_per_op": 2}, Contradicted},
		// A queued lock faster at 4 and 16 cores holds, at 16 only partly.
		{"arm-queued", world{"scaling/qspinlock/throughput_ops_s": 1.3}, Holds},
		{"arm-queued", world{"scaling/qspinlock/throughput_ops_s@cores=16": 1.3, "scaling/qspinlock/throughput_ops_s@cores=4": 0.84}, Partly},
		{"arm-queued", world{"scaling/qspinlock/throughput_ops_s@cores=16": 0.9}, Contradicted},
		// Notify 0.65-0.9 of the mutex's time holds; slower contradicts.
		{"esp-table-time", world{"esp-main/notify/ns_per_op": 800, "esp-main/mutex/ns_per_op": 1000}, Holds},
		{"esp-table-time", world{"esp-main/notify/ns_per_op": 500, "esp-main/mutex/ns_per_op": 1000}, Partly},
		{"esp-table-time", world{"esp-main/notify/ns_per_op": 1200, "esp-main/mutex/ns_per_op": 1000}, Contradicted},
		// Notify's cores less busy, both within 10 points of the article.
		{"esp-table-cpu", world{"esp-main/notify/cpu_core0_pct": 47, "esp-main/mutex/cpu_core0_pct": 53}, Holds},
		{"esp-table-cpu", world{"esp-main/notify/cpu_core0_pct": 47, "esp-main/mutex/cpu_core0_pct": 99}, Partly},
		{"esp-table-cpu", world{"esp-main/notify/cpu_core0_pct": 60, "esp-main/mutex/cpu_core0_pct": 53}, Contradicted},
		// WFI/WFE within a factor 2 of the article's 1.87/0.12.
		{"arm-table-wait", world{"rk-main/wfe/avg_lock_wait_ms": 0.1, "rk-main/wfi/avg_lock_wait_ms": 1.5}, Holds},
		{"arm-table-wait", world{"rk-main/wfe/avg_lock_wait_ms": 0.01, "rk-main/wfi/avg_lock_wait_ms": 1.5}, Partly}, // 150x
		{"arm-table-wait", world{"rk-main/wfe/avg_lock_wait_ms": 0.1, "rk-main/wfi/avg_lock_wait_ms": 0.5}, Partly},  // 5x
		{"arm-table-wait", world{"rk-main/wfe/avg_lock_wait_ms": 2, "rk-main/wfi/avg_lock_wait_ms": 1.5}, Contradicted},
		// WFI's throughput change within 10 points of the article's -23.7%
		// (24,500 -> 18,700 ops/s) holds; a larger fall is partly.
		{"arm-table-throughput", world{"rk-main/wfe/throughput_ops_s": 1000, "rk-main/wfi/throughput_ops_s": 700}, Holds},
		{"arm-table-throughput", world{"rk-main/wfe/throughput_ops_s": 1000, "rk-main/wfi/throughput_ops_s": 600}, Partly},
		{"arm-table-throughput", world{"rk-main/wfe/throughput_ops_s": 1000, "rk-main/wfi/throughput_ops_s": 1100}, Contradicted},
		{"arm-table-power", world{"rk-main/wfe/power_mw": 2100, "rk-main/wfi/power_mw": 2600}, Holds},
		{"arm-table-power", world{"rk-main/wfe/power_mw": 2600, "rk-main/wfi/power_mw": 2100}, Contradicted},
		// WFI's longest wait 10x WFE's holds, above it partly.
		{"arm-incident-spikes", world{"incident/qspinlock/max_lock_wait_ms@wait=1": 20}, Holds},
		{"arm-incident-spikes", world{"incident/qspinlock/max_lock_wait_ms@wait=1": 3}, Partly},
		{"arm-incident-spikes", world{"incident/qspinlock/max_lock_wait_ms@wait=0": 3}, Contradicted},
		// No event woke WFI; a wait over the article's 1 ms holds.
		{"arm-wfi-not-woken", world{"rk-main/wfi/wakeups_event": 0, "rk-main/wfi/avg_lock_wait_ms": 2}, Holds},
		{"arm-wfi-not-woken", world{"rk-main/wfi/wakeups_event": 0, "rk-main/wfi/avg_lock_wait_ms": 0.5}, Partly},
		{"arm-wfi-not-woken", world{"rk-main/wfi/wakeups_event": 3, "rk-main/wfi/avg_lock_wait_ms": 2}, Contradicted},
	} {
		js := l.JudgeResults(tc.w.results(t, l))
		found := false
		for _, j := range js {
			if j.ID == tc.claim {
				found = true
				if j.Verdict != tc.want {
					t.Errorf("%s in %v: %s (%s; %s), want %s", tc.claim, tc.w, j.Verdict, j.Magnitude, j.Why, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("no claim %s", tc.claim)
		}
	}
}

// fakeLookup returns the catalog's experiments with a run function that
// simulates nothing: every metric 1, and a deadlock for the experiments
// named in fail.
func fakeLookup(fail ...string) func(string) (platforms.Experiment, error) {
	return func(name string) (platforms.Experiment, error) {
		e, err := catalog.Lookup(name)
		if err != nil {
			return e, err
		}
		e.Run = func(ctx context.Context, spec platforms.RunSpec) (platforms.RunResult, error) {
			for _, f := range fail {
				if f == name {
					return platforms.RunResult{}, errors.New("deadlock at 1ms: everyone waits")
				}
			}
			m := map[string]float64{}
			for _, mt := range e.Metrics {
				m[mt.Name] = 1
			}
			return platforms.RunResult{Metrics: m}, nil
		}
		return e, nil
	}
}

// Judge runs every run of the ledger and judges every claim; a run that
// fails is kept, and the claims resting on it are not simulated, naming the
// failure; an experiment the lookup does not know is an error naming the
// run. The counts, their text and the table add up to the claims.
func TestJudgeRunsTheLedger(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	opts := labkit.RunOptions{NoCache: true, Progress: labkit.NoProgress, Log: &bytes.Buffer{}}
	js, err := l.Judge(context.Background(), fakeLookup("esp32-priority-inversion"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != len(l.Claims) {
		t.Fatalf("%d judgements of %d claims", len(js), len(l.Claims))
	}
	total := 0
	for v, n := range Counts(js) {
		total += n
		if v == "" {
			t.Errorf("%d judgements without a verdict", n)
		}
	}
	if total != len(js) {
		t.Errorf("counts add up to %d, want %d", total, len(js))
	}
	for _, j := range js {
		rests := false
		for _, r := range j.Runs {
			rests = rests || r == "esp-inversion"
		}
		if rests && (j.Verdict != NotSimulated || !strings.Contains(j.Why, "deadlock at 1ms")) {
			t.Errorf("%s rests on the failed run: %s (%s), want not simulated naming the deadlock", j.ID, j.Verdict, j.Why)
		}
	}
	text := CountsText(js)
	tab := Table(js)
	if len(tab.Rows) != len(js) || !strings.Contains(tab.Title, text) || !strings.Contains(text, fmt.Sprintf("%d %s", Counts(js)[NotSimulated], NotSimulated)) {
		t.Errorf("table of %d rows titled %q, counts %q", len(tab.Rows), tab.Title, text)
	}
	broken := func(name string) (platforms.Experiment, error) {
		if name == "per-cpu-split" {
			return platforms.Experiment{}, errors.New("no such experiment")
		}
		return fakeLookup()(name)
	}
	if _, err := l.Judge(context.Background(), broken, opts); err == nil || !strings.Contains(err.Error(), "run split") {
		t.Errorf("unknown experiment: error %v, want one naming the run", err)
	}
}

// Splice replaces the generated section between the markers and nothing
// else; a document without exactly one pair in order is refused.
func TestSplice(t *testing.T) {
	doc := "# T\n\n" + ReadmeBegin + "\nold\n" + ReadmeEnd + "\ntail\n"
	got, err := Splice(doc, "new\n")
	if want := "# T\n\n" + ReadmeBegin + "\n\nnew\n\n" + ReadmeEnd + "\ntail\n"; err != nil || got != want {
		t.Errorf("Splice = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"no markers", ReadmeBegin + ReadmeBegin + ReadmeEnd, ReadmeEnd + "x" + ReadmeBegin} {
		if _, err := Splice(bad, "s"); err == nil {
			t.Errorf("Splice(%q) accepted", bad)
		}
	}
}

// The README section shows the models' numbers from the results, the
// article's from the experiments' references, and every claim's verdict.
func TestReadmeShowsTheResults(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	w := world{"rk-main/wfe/avg_lock_wait_ms": 0.0123, "rk-main/wfi/avg_lock_wait_ms": 4.56,
		"esp-main/mutex/ns_per_op": 7777, "esp-main/notify/ns_per_op": 8888,
		"esp-main/mutex/cpu_core0_pct": 61, "esp-main/mutex/cpu_core1_pct": 39}
	results := w.results(t, l)
	js := l.JudgeResults(results)
	s := l.Readme(results, js)
	for _, want := range []string{"| 0.0123 |", "| 4.56 |", "| 7,777 |", "| 8,888 |", "| 61 / 39 |", CountsText(js)} {
		if !strings.Contains(s, want) {
			t.Errorf("the section lacks %q", want)
		}
	}
	for _, j := range js {
		if !strings.Contains(s, "| "+string(j.Verdict)+" |") {
			t.Errorf("the section lacks the verdict of %s", j.ID)
		}
	}
}

// A claim is judged on numbers, never on a missing one: with one variant
// of one run failed, every claim either says it is not simulated, naming
// that failure, or comes out exactly as with every run present (it does not
// read that variant), unless it reads the failure itself. Kills a
// judgement made on a single NaN mean.
func TestOneFailedVariantIsNeverJudged(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]Judgement{}
	for _, j := range l.JudgeResults(world{}.results(t, l)) {
		base[j.ID] = j
	}
	for _, r := range l.Runs {
		e, err := r.Build(catalog.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range e.Variants {
			res := resultsOf(t, l, func(run Run, e platforms.Experiment, variant string, point int) (map[string]float64, string) {
				if run.Name == r.Name && variant == v.Name {
					return nil, "deadlock at 1ms: everyone waits"
				}
				m := map[string]float64{}
				for _, mt := range e.Metrics {
					m[mt.Name] = 1
				}
				return m, ""
			})
			for _, j := range l.JudgeResults(res) {
				b := base[j.ID]
				if parts := strings.Split(strings.TrimPrefix(j.Why, "no result for "), "; "); j.Verdict == NotSimulated && len(slices.Compact(slices.Sorted(slices.Values(parts)))) != len(parts) {
					t.Errorf("%s with %s/%s failed: %q names a missing cell twice", j.ID, r.Name, v.Name, j.Why)
				}
				switch {
				case j.Verdict == NotSimulated && strings.Contains(j.Why, r.Name+" "+v.Name+" "):
				case strings.Contains(j.Magnitude+j.Why, "everyone waits"): // a judge that reads the failure on purpose (arm-irqsave)
				case j.Verdict == b.Verdict && j.Magnitude == b.Magnitude && j.Why == b.Why:
				default:
					t.Errorf("%s with %s/%s failed: %s (%s; %s), want not simulated naming it, or as with every run: %s (%s)",
						j.ID, r.Name, v.Name, j.Verdict, j.Magnitude, j.Why, b.Verdict, b.Magnitude)
				}
			}
		}
	}
}

// A verdict quotes the model's deadlock report with its time written as
// everywhere else in the ledger.
func TestDeadlockQuote(t *testing.T) {
	for in, want := range map[string]string{
		"worker/0 on core 0 at 16.4855ms: deadlock at 16.4855ms: the handler waits on spinlock 0x10180": "deadlock at 16.49 ms: the handler waits on spinlock 0x10180",
		"deadlock at 850.5us: every waiter asleep":                                                      "deadlock at 850.5 µs: every waiter asleep",
		"deadlock at 12ns":               "deadlock at 12 ns",
		"a runaway after 1000000 events": "",
	} {
		if got := deadlock(in); got != want {
			t.Errorf("deadlock(%q) = %q, want %q", in, got, want)
		}
	}
}

// The hand-off caveat's runs are the core-to-core checks' own definitions
// (same experiment, variants and parameters, so notebook 05's results), and
// the caveat is on exactly the claims marked handoffs, quoting the runs'
// numbers against the published figures in labkit.HandOffText's words; the
// ledger table says it once, in CaveatNote. Kills a caveat built from
// another run, or typed in.
func TestHandOffCaveat(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	w := world{}
	var vs []labkit.Verdict
	for i, h := range handOffRuns {
		c := labkit.Checks()[slices.IndexFunc(labkit.Checks(), func(c labkit.Check) bool { return c.ID == h.check })]
		run := l.Runs[slices.IndexFunc(l.Runs, func(r Run) bool { return r.Name == h.run })]
		got, err := run.Build(catalog.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		want, err := catalog.Lookup(c.Experiment)
		if err == nil {
			want, err = want.WithVariants(c.Variant)
		}
		if err == nil {
			want, err = want.WithSettings(c.Settings...)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || !slices.Equal(got.VariantNames(), want.VariantNames()) || !maps.Equal(got.Params.Values(), want.Params.Values()) || got.Repeats != want.Repeats {
			t.Errorf("run %s is %s %v, want check %s's %s %v at its settings", h.run, got.Name, got.VariantNames(), c.ID, want.Name, want.VariantNames())
		}
		model := 100 + 23.4*float64(i+1)
		w[h.run+"/"+c.Variant+"/"+c.Metric] = model
		vs = append(vs, c.Judge(model))
	}
	w[handOffRuns[0].run+"/llsc/transfers_per_hop"] = 3
	text := labkit.HandOffText(vs)
	if text == "" {
		t.Fatal("HandOffText of the three checks is empty")
	}
	marked := 0
	js := l.JudgeResults(w.results(t, l))
	for _, j := range js {
		switch {
		case j.HandOffs:
			marked++
			if !strings.Contains(j.Caveat, "3 line transfers") || !strings.Contains(j.Caveat, text) ||
				!strings.Contains(j.WhyText(), j.Why+". Caveat: ") {
				t.Errorf("%s: caveat %q (why %q); want the runs' numbers in HandOffText's words %q", j.ID, j.Caveat, j.WhyText(), text)
			}
		case j.Caveat != "" || j.WhyText() != j.Why:
			t.Errorf("%s: not marked handoffs, but has caveat %q", j.ID, j.Caveat)
		}
	}
	note, tab := CaveatNote(js), Table(js)
	if strings.Count(note, text) != 1 || strings.Contains(fmt.Sprint(tab.Rows), text) {
		t.Errorf("the table should say the caveat once, in its note: note %q", note)
	}
	if marked == 0 {
		t.Error("no claim carries the hand-off caveat")
	}
}

// arm-wfet's reason follows the figures with the event stream on and 10%
// of wake-ups lost: where WFET's shorter timeout cuts the mean wait (the
// RK3399 model's 15.2 vs 7.85 µs) it says so, with the cut; only where the
// two wait alike does it say the stream already does WFET's job. Kills the
// reason "the timeout matters only where nothing else bounds a WFE sleep"
// beside a table where WFET halves the wait.
func TestWFETReasonFollowsTheWaits(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		wfeOn, wfetOn float64 // µs, stream on, 10% lost
		want          string
	}{
		{15.21, 7.848, "cuts the mean wait by 48%"},
		{15.21, 15.0, "the timeout matters only where nothing else bounds a WFE sleep"},
	} {
		res := resultsOf(t, l, func(r Run, e platforms.Experiment, variant string, point int) (map[string]float64, string) {
			m := map[string]float64{}
			for _, mt := range e.Metrics {
				m[mt.Name] = 1
			}
			if r.Name != "rk-wfet" {
				return m, ""
			}
			pt := e.Point(point)
			m["avg_lock_wait_ms"] = 0.0033
			switch {
			case pt["event_stream"] == 0 && pt["lose_wake"] > 0 && variant == "wfe":
				return nil, "worker/0 on core 0 at 1ms: deadlock at 20us: worker/1 (core 1) waits on x"
			case pt["event_stream"] == 1 && pt["lose_wake"] > 0:
				m["avg_lock_wait_ms"] = map[string]float64{"wfe": tc.wfeOn, "wfet": tc.wfetOn}[variant] / 1000
			}
			return m, ""
		})
		for _, j := range l.JudgeResults(res) {
			if j.ID != "arm-wfet" {
				continue
			}
			if j.Verdict != Partly || !strings.Contains(j.Why, tc.want) || !strings.Contains(j.Magnitude, fmt.Sprintf("WFE %s µs, WFET %s µs", num(tc.wfeOn), num(tc.wfetOn))) {
				t.Errorf("WFE %g, WFET %g µs: %s, %q (%s); want partly saying %q", tc.wfeOn, tc.wfetOn, j.Verdict, j.Why, j.Magnitude, tc.want)
			}
		}
	}
}

// A verdict that turns on a metric varying from seed to seed (a maximum
// over Poisson interrupts) is unresolved when the 95% interval of the ratio
// it compares holds the threshold, or when one seed gives no interval; the
// same means with a tight spread decide it. Kills a judge that compares the
// means alone.
func TestNoisyVerdictsWaitForTheSeeds(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	irq := func(notify, mutex []float64) map[at][]float64 {
		return map[at][]float64{{"esp-main", "notify", 0, "max_irq_latency_us"}: notify, {"esp-main", "mutex", 0, "max_irq_latency_us"}: mutex}
	}
	spikes := func(wfi, wfe []float64) map[at][]float64 {
		return map[at][]float64{{"incident", "qspinlock", 1, "max_lock_wait_ms"}: wfi, {"incident", "qspinlock", 0, "max_lock_wait_ms"}: wfe}
	}
	split := func(before, after []float64) map[at][]float64 {
		return map[at][]float64{{"split", "global-wfi", 0, "max_lock_wait_ms"}: before, {"split", "percpu", 0, "max_lock_wait_ms"}: after}
	}
	queued := func(q16, t16 []float64) map[at][]float64 { // cores 4 (point 0) at 1 and 1: the queued lock keeps up
		return map[at][]float64{{"scaling", "qspinlock", 1, "throughput_ops_s"}: q16, {"scaling", "ticket", 1, "throughput_ops_s"}: t16,
			{"scaling", "qspinlock", 0, "throughput_ops_s"}: {0.84, 0.84}, {"scaling", "ticket", 0, "throughput_ops_s"}: {1, 1}}
	}
	rule := func(notify, mutex []float64) map[at][]float64 { // elsewhere notify and the mutex tie
		return map[at][]float64{{"esp-cs", "notify", 0, "ns_per_op"}: notify, {"esp-cs", "mutex", 0, "ns_per_op"}: mutex}
	}
	for _, tc := range []struct {
		claim  string
		seeds  map[at][]float64
		want   Verdict
		repeat int // esp-main's repeats, when not the ledger's
	}{
		{"esp-table-irq", irq([]float64{7, 7.5, 7.9}, []float64{5, 5, 5.1}), Contradicted, 0},
		{"esp-table-irq", irq([]float64{4, 9, 7.5}, []float64{5, 5.3, 4.7}), Unresolved, 0}, // mean 6.83 against 5
		{"esp-table-irq", irq([]float64{3.8, 4.1, 4}, []float64{5, 5.2, 5.1}), Holds, 0},
		{"esp-table-irq", irq([]float64{7}, []float64{5}), Unresolved, 1},
		{"arm-incident-spikes", spikes([]float64{4, 4.5, 5}, []float64{0.03, 0.031, 0.03}), Holds, 0},
		{"arm-incident-spikes", spikes([]float64{0.2, 0.5, 0.35}, []float64{0.03, 0.031, 0.03}), Unresolved, 0}, // 11.5x, on both sides of 10x
		{"arm-incident-spikes", spikes([]float64{0.2, 0.21, 0.205}, []float64{0.03, 0.031, 0.03}), Partly, 0},
		// About 12x in every seed, while the seeds move both cells together:
		// two points of one sweep share their seeds, so read seed for seed
		// the ratio is 11.4-12.6x; taken as independent, it would straddle 10x.
		{"arm-incident-spikes", spikes([]float64{0.36, 0.47, 0.61}, []float64{0.03, 0.04, 0.05}), Holds, 0},
		{"arm-5g-latency", split([]float64{4, 4.5, 5}, []float64{0.4, 0.5, 0.6}), Holds, 0},    // 9x: the worst wait falls
		{"arm-5g-latency", split([]float64{4, 4.5, 5}, []float64{0.1, 0.5, 6}), Unresolved, 0}, // 1.6x, one seed's after above its before
		{"arm-5g-latency", split([]float64{4, 4.5, 5}, []float64{8, 9, 10}), Contradicted, 0},  // the worst wait doubles
		// Throughput 1.08x at 16 cores, one seed 0.83x: the queued lock may
		// not be the faster; the same mean with tight seeds is partly.
		{"arm-queued", queued([]float64{1, 1.6}, []float64{1.2, 1.2}), Unresolved, 0},
		{"arm-queued", queued([]float64{1.3, 1.31}, []float64{1.2, 1.21}), Partly, 0},
		// Notify 1.1x the mutex's at 0 cycles, one seed faster.
		{"esp-rule", rule([]float64{0.6, 1.5, 1.2}, []float64{1, 1, 1}), Unresolved, 0},
		{"esp-rule", rule([]float64{1.1, 1.11, 1.1}, []float64{1, 1, 1}), Contradicted, 0},
	} {
		l := l
		if tc.repeat > 0 {
			l.Runs = slices.Clone(l.Runs)
			for i := range l.Runs {
				if l.Runs[i].Name == "esp-main" {
					l.Runs[i].Repeats = tc.repeat
				}
			}
		}
		res := world{}.results(t, l)
		for c, xs := range tc.seeds {
			runs := res[c.run].Runs
			for i := range runs {
				if runs[i].Variant == c.variant && runs[i].Point == c.point {
					if runs[i].Repeat >= len(xs) {
						t.Fatalf("%s: %v has %d seeds, the run more", tc.claim, c, len(xs))
					}
					runs[i].Metrics = maps.Clone(runs[i].Metrics)
					runs[i].Metrics[c.metric] = xs[runs[i].Repeat]
				}
			}
		}
		for _, j := range l.JudgeResults(res) {
			if j.ID != tc.claim {
				continue
			}
			if j.Verdict != tc.want || !strings.Contains(j.Magnitude, "seed") {
				t.Errorf("%s with seeds %v: %s (%s; %s), want %s with the interval in the magnitude", tc.claim, tc.seeds, j.Verdict, j.Magnitude, j.Why, tc.want)
			}
			if j.Verdict == Unresolved && !strings.Contains(j.Why, "more repeats of run "+slices.Collect(maps.Keys(tc.seeds))[0].run) {
				t.Errorf("%s unresolved: why %q does not name the run to repeat", tc.claim, j.Why)
			}
		}
	}
}

// TestAlignIdenticalSeedBySeed: the alignment claim says "identical to the
// last bit" only when every seed gives the same time at both alignments,
// not when the means agree because two seeds' times swapped.
func TestAlignIdenticalSeedBySeed(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at64 []float64
		want bool
	}{{[]float64{100, 200}, true}, {[]float64{200, 100}, false}} {
		res := world{}.results(t, l)
		for _, name := range []string{"esp-align8", "esp-align64", "esp-psram8", "esp-psram64"} {
			xs := []float64{100, 200}
			if name == "esp-align64" {
				xs = tc.at64
			}
			runs := res[name].Runs
			for i := range runs {
				runs[i].Metrics = maps.Clone(runs[i].Metrics)
				runs[i].Metrics["ns_per_op"] = xs[runs[i].Repeat]
			}
		}
		for _, j := range l.JudgeResults(res) {
			if j.ID == "esp-align" && strings.Contains(j.Magnitude, "identical to the last bit") != tc.want {
				t.Errorf("64-byte seeds %v against 8-byte 100, 200: %s", tc.at64, j.Magnitude)
			}
		}
		if got := strings.Contains(l.Readme(res, l.JudgeResults(res)), "the same seeds give the same times to the last bit"); got != tc.want {
			t.Errorf("64-byte seeds %v: README summary says identical: %v", tc.at64, got)
		}
	}
}

// TestPSRAMStartNamedWhenEveryHandOffSwitches: the alignment claim calls
// the PSRAM counter's change a cost of the run's start only when every
// PSRAM seed of notify switched at each hand-off (two per increment), not
// when one seed started in lock-step.
func TestPSRAMStartNamedWhenEveryHandOffSwitches(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fewer []float64 // switches short of two per increment, by seed
		want  bool
	}{{[]float64{0, 0}, true}, {[]float64{0, 3}, false}} {
		res := world{}.results(t, l)
		runs := res["esp-psram8"].Runs
		for i := range runs {
			if runs[i].Variant == "notify" {
				runs[i].Metrics = maps.Clone(runs[i].Metrics)
				runs[i].Metrics["context_switches"] = 2*runs[i].Metrics["expected_counter"] - tc.fewer[runs[i].Repeat]
			}
		}
		for _, j := range l.JudgeResults(res) {
			if j.ID == "esp-align" && strings.Contains(j.Magnitude, "a cost of the run's start") != tc.want {
				t.Errorf("switches short of two per increment by %v: %s", tc.fewer, j.Magnitude)
			}
		}
	}
}

// arm-5g-latency's reason says why the fixed system's worst wait is short
// only when it is: with no contended acquisition, the worst wait is a cache
// miss on the lock word, not a wait for another CPU.
func TestSplitWorstWaitReason(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		contended float64
		miss      bool
	}{{0, true}, {2.5, false}} {
		res := world{}.results(t, l)
		runs := res["split"].Runs
		for i := range runs {
			r := &runs[i]
			r.Metrics = maps.Clone(r.Metrics)
			switch {
			case r.Variant == "global-wfi":
				r.Metrics["max_lock_wait_ms"] = 4.3 + 0.01*float64(r.Repeat)
			case r.Variant == "percpu":
				r.Metrics["max_lock_wait_ms"] = 0.000123
				r.Metrics["contended_pct"] = tc.contended
			}
		}
		for _, j := range l.JudgeResults(res) {
			if j.ID != "arm-5g-latency" {
				continue
			}
			if j.Verdict != Holds || strings.Contains(j.Why, "misses in the cache") != tc.miss || strings.Contains(j.Why, "handler") || !strings.Contains(j.Why, "sizes are not comparable") {
				t.Errorf("percpu %g%% contended: %s, %q; want holds, sizes not comparable, naming the cache miss: %v", tc.contended, j.Verdict, j.Why, tc.miss)
			}
		}
	}
}

// Package playground is the live view behind notebooks/07-playground: for
// each platform, a few key parameters to move and a run size small enough
// that a change re-runs the experiment and redraws its charts in under a
// second (BenchmarkRedraw measures it).
package playground

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"synclab/labkit"
	"synclab/labkit/catalog"
)

// Control is a parameter the playground lets you move: a slider over its
// values, in increasing order; it starts at the experiment's default.
type Control struct {
	Param  string
	Values []float64
	// Doc says what it changes, in a few words.
	Doc string
}

// Setup is one experiment's playground.
type Setup struct {
	Experiment string
	// Size holds the parameter values that keep a redraw short (run
	// length, iterations); they stay fixed.
	Size     map[string]float64
	Variants []string
	Repeats  int
	Controls []Control
	// Metrics are the metrics charted, one bar chart each.
	Metrics []string
}

// Setups are the playgrounds, one per platform.
var Setups = []Setup{
	{
		Experiment: "rk3399-spinlock-wait", Size: map[string]float64{"duration_ms": 100},
		Variants: []string{"wfe", "wfi", "relax"}, Repeats: 5,
		Metrics: []string{"avg_lock_wait_ms", "throughput_ops_s", "power_mw"},
		Controls: []Control{
			{Param: "hz", Values: []float64{100, 250, 300, 1000}, Doc: "CONFIG_HZ: a WFI waiter sleeps until its tick"},
			{Param: "cs_us", Values: []float64{1, 2, 5, 10, 20, 50, 100}, Doc: "critical section (µs)"},
			{Param: "outside_us", Values: []float64{10, 20, 50, 90, 200, 500, 1000}, Doc: "work between acquisitions (µs)"},
			{Param: "load", Values: []float64{0.1, 0.3, 0.5, 0.7, 0.9, 1}, Doc: "offered load"},
			{Param: "lose_wake", Values: []float64{0, 0.01, 0.1, 0.5}, Doc: "probability a wake-up event is lost"},
			{Param: "event_stream", Values: []float64{0, 1}, Doc: "the timer's event stream (1 on, 0 off)"},
		},
	},
	{
		Experiment: "esp32-critical-section", Size: map[string]float64{"iterations": 5000},
		Variants: []string{"mutex", "notify", "critical"}, Repeats: 5,
		Metrics: []string{"ns_per_op", "max_irq_latency_us", "cpu_core0_pct"},
		Controls: []Control{
			{Param: "cs_cycles", Values: []float64{0, 120, 480, 1200, 2400, 4800}, Doc: "extra cycles inside the critical section"},
			{Param: "tasks", Values: []float64{2, 3, 4, 6, 8}, Doc: "worker tasks over the two cores"},
			{Param: "tick_hz", Values: []float64{100, 1000}, Doc: "CONFIG_FREERTOS_HZ"},
			{Param: "cpu_mhz", Values: []float64{80, 160, 240}, Doc: "CPU clock (MHz)"},
		},
	},
	{
		Experiment: "lock-scaling", Size: map[string]float64{"duration_ms": 2},
		Variants: []string{"tas", "ttas", "ticket", "qspinlock"}, Repeats: 5,
		Metrics: []string{"throughput_ops_s", "handoff_ns", "power_mw"},
		Controls: []Control{
			{Param: "cores", Values: []float64{1, 2, 4, 8, 16, 32, 64}, Doc: "cores contending for the lock"},
			{Param: "cs_us", Values: []float64{0.1, 0.5, 1, 2, 5, 10}, Doc: "critical section (µs)"},
			{Param: "outside_us", Values: []float64{0.5, 1, 2, 5, 10, 50}, Doc: "work between acquisitions (µs)"},
			{Param: "wait", Values: []float64{0, 1, 2, 3, 4}, Doc: "wait policy: 0 wfe (as arm64 does), 1 wfi, 2 relax, 3 adaptive, 4 tiered"},
			{Param: "monitor_loss", Values: []float64{0, 1}, Doc: "1: taking a line for writing clears other cores' exclusive monitors, as a store does"},
			{Param: "a72_prfm_upgrade", Values: []float64{0, 1}, Doc: "1: a prefetch for store takes a line the core shares owned; 0: it does nothing, as an A53's"},
		},
	},
}

// Lookup returns the setup of an experiment; the error lists the others.
func Lookup(experiment string) (Setup, error) {
	var names []string
	for _, s := range Setups {
		if s.Experiment == experiment {
			return s, nil
		}
		names = append(names, s.Experiment)
	}
	return Setup{}, fmt.Errorf("no playground for %q; playgrounds: %s", experiment, strings.Join(names, ", "))
}

// Defaults are the experiment's defaults of the controls' parameters (the
// nearest of a control's values when the default is not one of them).
func (s Setup) Defaults() (map[string]float64, error) {
	e, err := catalog.Lookup(s.Experiment)
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for _, c := range s.Controls {
		d := e.Params.Get(c.Param)
		best := c.Values[0]
		for _, v := range c.Values {
			if math.Abs(v-d) < math.Abs(best-d) {
				best = v
			}
		}
		m[c.Param] = best
	}
	return m, nil
}

// View is what a redraw shows: the summary table and a chart per metric.
type View struct {
	Table  labkit.Table
	Charts []*labkit.Chart
}

// HTML is the view as one HTML fragment, for gonbui.UpdateHTML (the page
// must have the ECharts library: labkit.InitNotebook).
func (v View) HTML() string {
	var b strings.Builder
	b.WriteString(v.Table.StyledHTML())
	for _, c := range v.Charts {
		b.WriteString(c.HTML())
	}
	return b.String()
}

// Redraw runs the experiment at the setup's size with the given control
// values (not cached: a playground explores) and returns its view. A value
// the parameter does not accept is an error naming it.
func (s Setup) Redraw(ctx context.Context, values map[string]float64) (View, error) {
	e, err := catalog.Lookup(s.Experiment)
	if err != nil {
		return View{}, err
	}
	set := map[string]float64{}
	for k, v := range s.Size {
		set[k] = v
	}
	for k, v := range values {
		if !slices.ContainsFunc(s.Controls, func(c Control) bool { return c.Param == k }) {
			return View{}, fmt.Errorf("playground %s: %s is not one of its controls", s.Experiment, k)
		}
		set[k] = v
	}
	res, err := labkit.RunWith(ctx, e, labkit.Spec{Variants: s.Variants, Set: set, Repeats: s.Repeats,
		Options: labkit.RunOptions{NoCache: true, Progress: labkit.NoProgress}})
	if err != nil {
		return View{}, err
	}
	v := View{Table: labkit.SummaryTable(res)}
	v.Table.Rows = slices.DeleteFunc(v.Table.Rows, func(row []string) bool {
		return !slices.ContainsFunc(s.Metrics, func(m string) bool { return strings.HasPrefix(row[0], m+" ") || row[0] == m })
	})
	for _, m := range s.Metrics {
		v.Charts = append(v.Charts, labkit.BarsCI(res, m))
	}
	return v, nil
}

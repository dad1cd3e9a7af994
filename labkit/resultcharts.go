package labkit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"synclab/labkit/internal/plural"
	"synclab/platforms"
)

// MinRepeatsForCI is the fewest runs a chart draws a 95% interval from;
// with fewer it draws the runs themselves (two or three runs give an
// interval too wide, or too unstable, to read).
const MinRepeatsForCI = 5

// pointLabel names a sweep point by its swept values ("default" if none).
func pointLabel(pt map[string]float64) string {
	if len(pt) == 0 {
		return "default"
	}
	keys := sortedKeys(pt)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + Num(pt[k])
	}
	return strings.Join(parts, " ")
}

// clipped returns a summary's interval clipped to the metric's physical
// range.
func clipped(m platforms.Metric, s Summary) (lo, hi float64) {
	min, max := m.Range()
	return math.Max(s.Lo, min), math.Min(s.Hi, max)
}

// repeatsNote describes what a chart of r draws per point: "mean ± 95% CI
// of 5 runs" or the runs themselves when there are fewer than
// MinRepeatsForCI, and the metric's direction.
func repeatsNote(minN, maxN int, interval bool, better platforms.Better, what string) string {
	runs := plural.Count(minN, "run")
	switch {
	case maxN != minN:
		runs = fmt.Sprintf("%d-%d runs", minN, maxN)
	case minN == 1:
		runs = "1 run"
	}
	s := "mean of " + runs + " with its 95% interval (" + what + ")"
	if !interval {
		// The tables give a 95% interval from 2 runs; a chart draws one from
		// MinRepeatsForCI, since fewer give bars too wide to read.
		s = fmt.Sprintf("mean of %s; dots: each run (a 95%% interval is drawn from %d runs up)", runs, MinRepeatsForCI)
		if maxN == 1 {
			s = "one run each (no interval)"
		}
	}
	if better != platforms.Neither {
		s += "; " + string(better) + " is better"
	}
	return s
}

// runCounts returns the fewest and most successful runs of the metric over
// the variants and points (those with none left out).
func runCounts(r *Result, metric string, points []int) (minN, maxN int) {
	minN = math.MaxInt
	for _, v := range r.Experiment.Variants {
		for _, p := range points {
			if n := len(r.Values(v.Name, p, metric)); n > 0 {
				minN, maxN = min(minN, n), max(maxN, n)
			}
		}
	}
	if maxN == 0 {
		minN = 0
	}
	return minN, maxN
}

// metricOf returns the experiment's metric of that name; an unknown name is
// an error naming it and listing the metrics the experiment reports.
func metricOf(e platforms.Experiment, name string) (platforms.Metric, error) {
	m, ok := e.Metric(name)
	if !ok {
		names := make([]string, len(e.Metrics))
		for i, m := range e.Metrics {
			names[i] = m.Name
		}
		return m, fmt.Errorf("experiment %s has no metric %q; metrics: %s", e.Name, name, strings.Join(names, ", "))
	}
	return m, nil
}

// mustMetric is metricOf for the charts returned without an error (their
// callers pass them straight to Display): an unknown metric is a
// programming error, and it panics, as Must would, rather than draw zeros.
func mustMetric(e platforms.Experiment, name string) platforms.Metric {
	return Must(metricOf(e, name))
}

// BarsCI is a bar chart of a metric's mean per variant with its 95%
// interval (clipped to the metric's physical range) as an error bar, or
// each run as a dot when there are fewer than MinRepeatsForCI runs. Without
// a sweep there is one bar per variant with its mean written above; with one,
// a group of bars per sweep point. Each variant has its colour, the same
// in every chart of the notebook. The axis is logarithmic where the values
// span more than 30x. It panics on a metric the experiment does not report,
// naming the metrics it does.
func BarsCI(r *Result, metric string) *Chart {
	e := r.Experiment
	m := mustMetric(e, metric)
	registerVariants(e)
	points := e.Points()
	all := make([]int, len(points))
	for i := range all {
		all[i] = i
	}
	minN, maxN := runCounts(r, metric, all)
	interval := minN >= MinRepeatsForCI
	single := len(points) == 1
	var cats []string
	if single {
		cats = e.VariantNames()
	} else {
		for _, pt := range points {
			cats = append(cats, pointLabel(pt))
		}
	}
	var groups []barGroup
	for k, v := range e.Variants {
		g := barGroup{name: v.Name}
		for p := range points {
			s := r.Summary(v.Name, p, metric)
			if s.N == 0 {
				continue
			}
			b := barItem{cat: p, mean: s.Mean, lo: math.NaN(), hi: math.NaN()}
			if single {
				b.cat = k
			}
			switch {
			case interval && s.N >= MinRepeatsForCI:
				b.lo, b.hi = clipped(m, s)
			case !interval:
				b.dots = r.Values(v.Name, p, metric)
			}
			g.bars = append(g.bars, b)
		}
		groups = append(groups, g)
	}
	var legend []string
	if !single {
		legend = e.VariantNames()
	}
	title := e.Name + ": " + MetricLabel(m)
	return barsChart(barSpec{layout: layout{title: title, subtitle: repeatsNote(minN, maxN, interval, m.Better, "error bar"),
		height: chartHeight, legend: legend, bottom: 40}, unit: m.Unit, categories: cats, ownCategory: single, labels: single,
		csv: r.csv()}, groups)
}

// SweepLines plots a metric's mean against a swept parameter, one line per
// variant (in its colour) with its 95% interval as a band, clipped to the
// metric's physical range, or each run as a dot when there are fewer than
// MinRepeatsForCI runs. Other swept parameters are held at their first
// value. The x axis is a value axis, logarithmic where the sweep spans more
// than 30x (evenly spaced categories when it also includes 0); so is the y
// axis for the values. An unknown metric or unswept parameter is an error.
func SweepLines(r *Result, metric, param string) (*Chart, error) {
	e := r.Experiment
	m, err := metricOf(e, metric)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(e.Sweep, func(a platforms.Axis) bool { return a.Param == param })
	if i < 0 {
		var swept []string
		for _, a := range e.Sweep {
			swept = append(swept, a.Param)
		}
		return nil, fmt.Errorf("experiment %s does not sweep %q; swept: %v", e.Name, param, swept)
	}
	registerVariants(e)
	var idx []int // points along the axis, other axes at their first value
	var held []string
	for p, pt := range e.Points() {
		ok := true
		for _, a := range e.Sweep {
			ok = ok && (a.Param == param || pt[a.Param] == a.Values[0])
		}
		if ok {
			idx = append(idx, p)
		}
	}
	for _, a := range e.Sweep {
		if a.Param != param {
			held = append(held, a.Param+"="+Num(a.Values[0]))
		}
	}
	xs := e.Sweep[i].Values
	kind := axisKind(xs)
	minN, maxN := runCounts(r, metric, idx)
	interval := minN >= MinRepeatsForCI
	line := charts.NewLine()
	var overlay []charts.Overlaper
	var values []float64
	for _, v := range e.Variants {
		mean := make([]opts.LineData, len(idx))
		var band []opts.CustomData
		var dots []opts.ScatterData
		for j, pt := range idx {
			s := r.Summary(v.Name, pt, metric)
			x := xCoord(kind, xs, j)
			mean[j] = opts.LineData{Value: []any{x, num(s.Mean)}}
			values = append(values, s.Mean)
			if interval {
				lo, hi := clipped(m, s)
				band = append(band, opts.CustomData{Value: []any{x, num(lo), num(hi)}})
				values = append(values, lo, hi)
				continue
			}
			for _, y := range r.Values(v.Name, pt, metric) {
				dots = append(dots, opts.ScatterData{Value: []any{x, num(y)}, SymbolSize: 6})
				values = append(values, y)
			}
		}
		line.AddSeries(v.Name, mean, seriesStyle(v.Name)...)
		if len(band) > 0 {
			c := charts.NewCustom()
			c.AddSeries(v.Name, band, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: fn("band")}),
				charts.WithEncodeOpts(opts.Encode{X: 0, Y: []int{1, 2}}), charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOf(v.Name)}))
			overlay = append(overlay, c)
		}
		if len(dots) > 0 {
			sc := charts.NewScatter()
			sc.AddSeries(v.Name, dots, charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOf(v.Name), Opacity: opts.Float(0.7)}))
			overlay = append(overlay, sc)
		}
	}
	p, _ := e.Params.Lookup(param)
	xName := param
	if p.Unit != "" && p.Unit != param {
		xName += " (" + p.Unit + ")"
	}
	sub := repeatsNote(minN, maxN, interval, m.Better, "band")
	if len(held) > 0 {
		sub += "; " + strings.Join(held, ", ")
	}
	title := fmt.Sprintf("%s: %s vs %s", e.Name, MetricLabel(m), param)
	ya := lineAxis(m.Unit, values)
	xa := xAxis(xName, xs)
	line.SetGlobalOptions(append(layout{title: title, subtitle: sub, height: chartHeight, legend: e.VariantNames(), bottom: 64}.globals(),
		charts.WithXAxisOpts(xa), charts.WithYAxisOpts(ya))...)
	if kind == "category" {
		line.SetXAxis(xa.Data)
	}
	line.Overlap(overlay...)
	return newChart(title, chartHeight, r.csv(), line), nil
}

// Histogram shows the distribution of samples (e.g. latencies) per series
// over shared bins; values are the fraction of each series' samples.
func Histogram(title, unit string, series map[string][]float64, bins int) *Chart {
	names := sortedKeys(series)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, xs := range series {
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	bins = max(bins, 1)
	w := (hi - lo) / float64(bins)
	cats := make([]string, bins)
	for i := range cats {
		cats[i] = Num(lo + w*(float64(i)+0.5))
	}
	var out []Series
	for _, n := range names {
		counts := make([]float64, bins)
		for _, x := range series[n] {
			counts[min(int((x-lo)/w), bins-1)]++
		}
		for i := range counts {
			counts[i] /= float64(max(len(series[n]), 1))
		}
		out = append(out, Series{Name: n, Values: counts})
	}
	bar := charts.NewBar()
	ax := categoryAxis()
	ax.Name, ax.NameLocation, ax.NameGap = "bin centre ("+ShowUnit(unit)+")", "middle", 28
	ax.AxisLabel.Interval = ""
	bar.SetGlobalOptions(append(layout{title: title, subtitle: "fraction of each series' samples per bin", height: chartHeight,
		legend: names, bottom: 64}.globals(), charts.WithXAxisOpts(ax), charts.WithYAxisOpts(yAxis("fraction", nil)))...)
	bar.SetXAxis(cats)
	for _, s := range out {
		data := make([]opts.BarData, bins)
		for i, c := range s.Values {
			data[i] = opts.BarData{Value: c}
		}
		bar.AddSeries(s.Name, data, append(seriesStyle(s.Name), charts.WithBarChartOpts(opts.BarChart{BarGap: "0%"}))...)
	}
	return newChart(title, chartHeight, categoryCSV(cats, out), bar)
}

// CDF plots the empirical cumulative distribution of samples per series
// (at most 201 points each: the 0, 0.5, ..., 100th percentiles).
func CDF(title, unit string, series map[string][]float64) *Chart {
	unit = ShowUnit(unit)
	names := sortedKeys(series)
	var pooled []float64
	for _, n := range names {
		pooled = append(pooled, series[n]...)
	}
	xa := opts.XAxis{Name: unit, Type: "value", Scale: opts.Bool(true), NameLocation: "middle", NameGap: 28,
		AxisLabel: &opts.AxisLabel{Formatter: fn("num")}}
	if useLog(pooled) {
		xa.Type, xa.Scale, xa.Name = "log", nil, unit+" (log scale)"
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(layout{title: title, subtitle: "empirical CDF: share of samples at or below x", height: chartHeight,
		legend: names, bottom: 64}.globals(),
		charts.WithXAxisOpts(xa), charts.WithYAxisOpts(opts.YAxis{Name: "P(X ≤ x)", Type: "value", Max: 1}))...)
	var rows []Series
	for _, n := range names {
		xs := slices.Clone(series[n])
		slices.Sort(xs)
		var data []opts.LineData
		s := Series{Name: n}
		for q := 0; q <= 200 && len(xs) > 0; q++ {
			x := percentileSorted(xs, float64(q)/2)
			data = append(data, opts.LineData{Value: []any{num(x), float64(q) / 200}})
			s.Values = append(s.Values, x)
		}
		rows = append(rows, s)
		line.AddSeries(n, data, append(seriesStyle(n), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), Step: "end"}))...)
	}
	q := make([]float64, 201)
	for i := range q {
		q[i] = float64(i) / 200
	}
	return newChart(title, chartHeight, plainCSV("P", q, rows), line)
}

// SampleCharts returns the histogram and CDF of a named sample (e.g.
// "latency_us") pooled over each variant's runs at the default point.
func SampleCharts(r *Result, sample, unit string) (hist, cdf *Chart) {
	registerVariants(r.Experiment)
	series := map[string][]float64{}
	for _, v := range r.Experiment.Variants {
		if xs := r.Samples(v.Name, r.DefaultPoint(), sample); len(xs) > 0 {
			series[v.Name] = xs
		}
	}
	name := r.Experiment.Name + ": " + sample
	return Histogram(name+" histogram", unit, series, 40), CDF(name+" CDF", unit, series)
}

// MetricStack stacks the means of several metrics (in the same unit, e.g.
// per-component power) per variant at the default sweep point. It panics on
// a metric the experiment does not report, as BarsCI does.
func MetricStack(r *Result, title, unit string, metrics ...string) *Chart {
	cats := r.Experiment.VariantNames()
	var series []Series
	for _, m := range metrics {
		mustMetric(r.Experiment, m)
		s := Series{Name: m}
		for _, v := range cats {
			s.Values = append(s.Values, r.Summary(v, r.DefaultPoint(), m).Mean)
		}
		series = append(series, s)
	}
	return StackedBars(title, unit, cats, series)
}

// TornadoBar is one parameter's effect in a tornado chart: the change of a
// quantity (in %) when the parameter is at its Low and its High value.
type TornadoBar struct {
	Param     string
	Low, High float64
}

// Tornado draws horizontal bars of each parameter's effect, largest span on
// top; the chart grows with the number of parameters so that every name
// shows in full. An end that is NaN draws no bar (and counts as 0 in the
// span).
func Tornado(title, unit string, bars []TornadoBar) *Chart {
	sorted := slices.Clone(bars)
	span := func(b TornadoBar) float64 {
		z := func(x float64) float64 {
			if math.IsNaN(x) {
				return 0
			}
			return x
		}
		return math.Abs(z(b.High) - z(b.Low))
	}
	slices.SortStableFunc(sorted, func(a, b TornadoBar) int {
		return compareFloat(span(a), span(b))
	})
	names := make([]string, len(sorted))
	low := Series{Name: "at Low"}
	high := Series{Name: "at High"}
	for i, b := range sorted {
		names[i] = b.Param
		low.Values = append(low.Values, b.Low)
		high.Values = append(high.Values, b.High)
	}
	height := max(260, 150+26*len(sorted))
	bar := charts.NewBar()
	// XYReversal moves the categories to the y axis, not the axis options.
	bar.SetGlobalOptions(append(layout{title: title, subtitle: "change from the baseline with each ASSUME parameter at the Low / High end of its plausible range",
		height: height, legend: []string{low.Name, high.Name}, bottom: 64}.globals(),
		charts.WithXAxisOpts(opts.XAxis{Name: ShowUnit(unit), Type: "value", NameLocation: "middle", NameGap: 28,
			AxisLabel: &opts.AxisLabel{Formatter: fn("num")}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", AxisLabel: &opts.AxisLabel{Interval: "0"}}))...)
	bar.SetXAxis(names) // Validate puts it on the y axis (XYReversal)
	for _, s := range []Series{low, high} {
		data := make([]opts.BarData, len(s.Values))
		for i, v := range s.Values {
			data[i] = opts.BarData{Value: num(v)}
		}
		// Side by side: when both ends move the same way, overlapping bars
		// would hide the shorter one.
		bar.AddSeries(s.Name, data, append(seriesStyle(s.Name), charts.WithBarChartOpts(opts.BarChart{BarGap: "0%"}))...)
	}
	bar.XYReversal()
	return newChart(title, height, categoryCSV(names, []Series{low, high}), bar)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

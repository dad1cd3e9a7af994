package labkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"synclab/platforms"
	"synclab/sim"
)

// Chart is a rendered go-echarts chart: its ECharts option as JavaScript
// text, ready to be displayed in a notebook (Display) or put in a report.
type Chart struct {
	Title string
	// ID is the chart element's id: a hash of the option plus a sequence
	// number, so it is deterministic and unique within a page.
	ID string
	// Option is the ECharts option object as JavaScript (it may contain
	// functions, e.g. the custom series' renderItem).
	Option        string
	Width, Height string
}

var chartSeq atomic.Int64

// Chart sizes.
const (
	chartWidth  = "900px"
	chartHeight = "440px"
)

// funcMarkers are go-echarts' markers around JavaScript functions in the
// option JSON (with the quotes that must go).
var funcMarkers = regexp.MustCompile(`(__f__")|("__f__)|(__f__)`)

// newChart renders c's option. It does not use RenderSnippet's Option:
// go-echarts v2.6.7 HTML-escapes it before stripping the function markers,
// which leaves functions quoted as strings.
func newChart(title string, c interface {
	Validate() // sets the axis data (from SetXAxis) and the assets
	JSONNotEscaped() template.HTML
}) *Chart {
	c.Validate()
	option := strings.TrimSpace(funcMarkers.ReplaceAllString(string(c.JSONNotEscaped()), ""))
	sum := sha256.Sum256([]byte(option))
	id := fmt.Sprintf("synclab-%s-%d", hex.EncodeToString(sum[:6]), chartSeq.Add(1))
	return &Chart{Title: title, ID: id, Option: option, Width: chartWidth, Height: chartHeight}
}

func globals(title, subtitle string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{Width: chartWidth, Height: chartHeight}),
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithAnimation(false),
	}
}

// num maps NaN and infinities to nil (a gap in ECharts; JSON has no NaN).
func num(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// pointLabel names a sweep point by its swept values ("default" if none).
func pointLabel(pt map[string]float64) string {
	if len(pt) == 0 {
		return "default"
	}
	keys := sortedKeys(pt)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, pt[k])
	}
	return strings.Join(parts, " ")
}

// errorBarJS draws a vertical error bar centred on bar k of n in a category
// band, assuming the bars use barGap 0 and barCategoryGap 20%. Data items
// are [category index, lo, hi, k, n].
const errorBarJS = `function (params, api) {
  var n = api.value(4), k = api.value(3), band = api.size([1, 0])[0], w = band * 0.8 / n;
  var x = api.coord([api.value(0), 0])[0] - band * 0.4 + w * (k + 0.5);
  var lo = api.coord([api.value(0), api.value(1)])[1], hi = api.coord([api.value(0), api.value(2)])[1], c = w * 0.2;
  var st = {stroke: '#222', lineWidth: 1.5};
  return {type: 'group', children: [
    {type: 'line', shape: {x1: x, y1: lo, x2: x, y2: hi}, style: st},
    {type: 'line', shape: {x1: x - c, y1: lo, x2: x + c, y2: lo}, style: st},
    {type: 'line', shape: {x1: x - c, y1: hi, x2: x + c, y2: hi}, style: st}]};
}`

// BarsCI is a grouped bar chart of a metric's mean per variant (one group per
// sweep point) with 95% confidence-interval error bars.
func BarsCI(r *Result, metric string) *Chart {
	e := r.Experiment
	m, _ := e.Metric(metric)
	points := e.Points()
	cats := make([]string, len(points))
	for i, p := range points {
		cats[i] = pointLabel(p)
	}
	title := fmt.Sprintf("%s: %s", e.Name, metric)
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(globals(title, "mean with 95% CI, "+string(m.Better)+" is better"),
		charts.WithYAxisOpts(opts.YAxis{Name: m.Unit, Type: "value"}))...)
	bar.SetXAxis(cats)
	var bars []opts.CustomData
	for k, v := range e.Variants {
		data := make([]opts.BarData, len(points))
		for p := range points {
			s := r.Summary(v.Name, p, metric)
			data[p] = opts.BarData{Value: num(s.Mean)}
			if !math.IsNaN(s.Half) {
				bars = append(bars, opts.CustomData{Name: v.Name, Value: []any{p, num(s.Lo), num(s.Hi), k, len(e.Variants)}})
			}
		}
		bar.AddSeries(v.Name, data, charts.WithBarChartOpts(opts.BarChart{BarGap: "0%", BarCategoryGap: "20%"}))
	}
	if len(bars) > 0 {
		ci := charts.NewCustom()
		ci.AddSeries("95% CI", bars, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: opts.FuncOpts(errorBarJS)}),
			charts.WithEncodeOpts(opts.Encode{X: 0, Y: []int{1, 2}}))
		bar.Overlap(ci)
	}
	return newChart(title, bar)
}

// SweepLines plots a metric's mean against a swept parameter, one line per
// variant with its 95% interval as a band. Other swept parameters are held
// at their first value.
func SweepLines(r *Result, metric, param string) (*Chart, error) {
	e := r.Experiment
	i := slices.IndexFunc(e.Sweep, func(a platforms.Axis) bool { return a.Param == param })
	if i < 0 {
		var swept []string
		for _, a := range e.Sweep {
			swept = append(swept, a.Param)
		}
		return nil, fmt.Errorf("experiment %s does not sweep %q; swept: %v", e.Name, param, swept)
	}
	m, _ := e.Metric(metric)
	var idx []int // points along the axis, other axes at their first value
	for p, pt := range e.Points() {
		ok := true
		for _, a := range e.Sweep {
			ok = ok && (a.Param == param || pt[a.Param] == a.Values[0])
		}
		if ok {
			idx = append(idx, p)
		}
	}
	cats := make([]string, len(idx))
	for j, v := range e.Sweep[i].Values {
		cats[j] = fmt.Sprintf("%g", v)
	}
	p, _ := e.Params.Lookup(param)
	title := fmt.Sprintf("%s: %s vs %s", e.Name, metric, param)
	line := charts.NewLine()
	line.SetGlobalOptions(append(globals(title, "mean, band = 95% CI"),
		charts.WithXAxisOpts(opts.XAxis{Name: param + " (" + p.Unit + ")", Type: "category"}),
		charts.WithYAxisOpts(opts.YAxis{Name: m.Unit, Type: "value", Scale: opts.Bool(true)}))...)
	line.SetXAxis(cats)
	for _, v := range e.Variants {
		mean := make([]opts.LineData, len(idx))
		lo := make([]opts.LineData, len(idx))
		width := make([]opts.LineData, len(idx))
		for j, pt := range idx {
			s := r.Summary(v.Name, pt, metric)
			mean[j] = opts.LineData{Value: num(s.Mean)}
			lo[j] = opts.LineData{Value: num(s.Lo)}
			width[j] = opts.LineData{Value: num(s.Hi - s.Lo)}
		}
		stack := "ci-" + v.Name
		line.AddSeries(v.Name, mean)
		line.AddSeries(v.Name+" CI low", lo, charts.WithLineChartOpts(opts.LineChart{Stack: stack, ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0)}))
		line.AddSeries(v.Name+" CI", width, charts.WithLineChartOpts(opts.LineChart{Stack: stack, ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0)}), charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.25)}))
	}
	return newChart(title, line), nil
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
		cats[i] = fmt.Sprintf("%.4g", lo+w*(float64(i)+0.5))
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(globals(title, "fraction of samples per bin"),
		charts.WithXAxisOpts(opts.XAxis{Name: unit, Type: "category"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "fraction", Type: "value"}))...)
	bar.SetXAxis(cats)
	for _, n := range names {
		counts := make([]float64, bins)
		for _, x := range series[n] {
			counts[min(int((x-lo)/w), bins-1)]++
		}
		data := make([]opts.BarData, bins)
		for i, c := range counts {
			data[i] = opts.BarData{Value: c / float64(max(len(series[n]), 1))}
		}
		bar.AddSeries(n, data, charts.WithBarChartOpts(opts.BarChart{BarGap: "0%"}))
	}
	return newChart(title, bar)
}

// CDF plots the empirical cumulative distribution of samples per series
// (at most 201 points each: the 0, 0.5, ..., 100th percentiles).
func CDF(title, unit string, series map[string][]float64) *Chart {
	line := charts.NewLine()
	line.SetGlobalOptions(append(globals(title, "empirical CDF"),
		charts.WithXAxisOpts(opts.XAxis{Name: unit, Type: "value", Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Name: "P(X <= x)", Type: "value", Max: 1}))...)
	for _, n := range sortedKeys(series) {
		xs := slices.Clone(series[n])
		slices.Sort(xs)
		var data []opts.LineData
		for q := 0; q <= 200 && len(xs) > 0; q++ {
			data = append(data, opts.LineData{Value: []any{num(percentileSorted(xs, float64(q)/2)), float64(q) / 200}})
		}
		line.AddSeries(n, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), Step: "end"}))
	}
	return newChart(title, line)
}

// SampleCharts returns the histogram and CDF of a named sample (e.g.
// "latency_us") pooled over each variant's runs at the default point.
func SampleCharts(r *Result, sample, unit string) (hist, cdf *Chart) {
	series := map[string][]float64{}
	for _, v := range r.Experiment.Variants {
		if xs := r.Samples(v.Name, r.DefaultPoint(), sample); len(xs) > 0 {
			series[v.Name] = xs
		}
	}
	name := r.Experiment.Name + ": " + sample
	return Histogram(name+" histogram", unit, series, 40), CDF(name+" CDF", unit, series)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ganttJS draws a span [start, end] on lane y as a rectangle clipped to the
// plot area. Data items are [start us, end us, lane index].
const ganttJS = `function (params, api) {
  var y = api.value(2), s = api.coord([api.value(0), y]), e = api.coord([api.value(1), y]);
  var h = api.size([0, 1])[1] * 0.6;
  var r = echarts.graphic.clipRectByRect({x: s[0], y: s[1] - h / 2, width: Math.max(e[0] - s[0], 1), height: h},
    {x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height});
  return r && {type: 'rect', shape: r, style: {fill: api.visual('color')}};
}`

const ganttTooltipJS = `function (p) { return p.seriesName + ' (' + p.name + '): ' + p.value[0].toFixed(3) + ' - ' + p.value[1].toFixed(3) + ' us'; }`

// Timeline is a per-core Gantt chart of a trace: one lane per core and trace
// lane (core states, lock ownership, tasks), one colour per label, time in
// microseconds.
func Timeline(title string, tr *sim.Trace) *Chart {
	type laneKey struct {
		core int
		lane string
	}
	var lanes []laneKey
	laneIdx := map[laneKey]int{}
	bySeries := map[string][]opts.CustomData{}
	if tr != nil {
		for _, s := range tr.Spans {
			k := laneKey{s.Core, s.Lane}
			if _, ok := laneIdx[k]; !ok {
				laneIdx[k] = len(lanes)
				lanes = append(lanes, k)
			}
		}
		// Lanes sorted by core then lane name; re-index after sorting.
		sort.Slice(lanes, func(i, j int) bool {
			return lanes[i].core < lanes[j].core || lanes[i].core == lanes[j].core && lanes[i].lane < lanes[j].lane
		})
		for i, k := range lanes {
			laneIdx[k] = i
		}
		for _, s := range tr.Spans {
			name := fmt.Sprintf("core %d %s", s.Core, s.Lane)
			bySeries[s.Label] = append(bySeries[s.Label], opts.CustomData{Name: name,
				Value: []any{s.Start.Micros(), s.End.Micros(), laneIdx[laneKey{s.Core, s.Lane}]}})
		}
	}
	names := make([]string, len(lanes))
	for i, k := range lanes {
		names[i] = fmt.Sprintf("core %d %s", k.core, k.lane)
	}
	c := charts.NewCustom()
	c.SetGlobalOptions(append(globals(title, "per-core timeline"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item", Formatter: opts.FuncOpts(ganttTooltipJS)}),
		charts.WithXAxisOpts(opts.XAxis{Name: "us", Type: "value", Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: names}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "slider", XAxisIndex: 0}, opts.DataZoom{Type: "inside", XAxisIndex: 0}))...)
	for _, label := range sortedKeys(bySeries) {
		c.AddSeries(label, bySeries[label], charts.WithCustomChartOpts(opts.CustomChart{RenderItem: opts.FuncOpts(ganttJS)}),
			charts.WithEncodeOpts(opts.Encode{X: []int{0, 1}, Y: 2}))
	}
	return newChart(title, c)
}

// Series is a named list of values, one per category.
type Series struct {
	Name   string
	Values []float64
}

// Lines plots plain numbers against a numeric x axis, one line per series:
// an analytic curve beside a simulated one, energy per operation against a
// parameter. series[k].Values[i] is the value at x[i]; NaN, infinities and
// values missing at the end of a shorter series leave gaps, values beyond
// len(x) are ignored. xName names the x axis (with its unit), unit the y
// axis.
func Lines(title, xName, unit string, x []float64, series ...Series) *Chart {
	line := charts.NewLine()
	line.SetGlobalOptions(append(globals(title, ""),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, Type: "value", Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Name: unit, Type: "value", Scale: opts.Bool(true)}))...)
	for _, s := range series {
		data := make([]opts.LineData, len(x))
		for i, xv := range x {
			y := math.NaN()
			if i < len(s.Values) {
				y = s.Values[i]
			}
			data[i] = opts.LineData{Value: []any{num(xv), num(y)}}
		}
		line.AddSeries(s.Name, data)
	}
	return newChart(title, line)
}

// StackedBars stacks series per category (power components per variant,
// energy split by state).
func StackedBars(title, unit string, categories []string, series []Series) *Chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(globals(title, ""), charts.WithYAxisOpts(opts.YAxis{Name: unit, Type: "value"}))...)
	bar.SetXAxis(categories)
	for _, s := range series {
		data := make([]opts.BarData, len(s.Values))
		for i, v := range s.Values {
			data[i] = opts.BarData{Value: num(v)}
		}
		bar.AddSeries(s.Name, data, charts.WithBarChartOpts(opts.BarChart{Stack: "total"}))
	}
	return newChart(title, bar)
}

// MetricStack stacks the means of several metrics (in the same unit, e.g.
// per-component power) per variant at the default sweep point.
func MetricStack(r *Result, title, unit string, metrics ...string) *Chart {
	cats := r.Experiment.VariantNames()
	var series []Series
	for _, m := range metrics {
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
// top.
func Tornado(title, unit string, bars []TornadoBar) *Chart {
	sorted := slices.Clone(bars)
	sort.SliceStable(sorted, func(i, j int) bool {
		return math.Abs(sorted[i].High-sorted[i].Low) < math.Abs(sorted[j].High-sorted[j].Low)
	})
	names := make([]string, len(sorted))
	low := make([]opts.BarData, len(sorted))
	high := make([]opts.BarData, len(sorted))
	for i, b := range sorted {
		names[i] = b.Param
		low[i] = opts.BarData{Value: num(b.Low)}
		high[i] = opts.BarData{Value: num(b.High)}
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(globals(title, "change from baseline with each ASSUME parameter at its Low / High"),
		charts.WithXAxisOpts(opts.XAxis{Name: unit, Type: "value"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category"}))...)
	bar.SetXAxis(names) // Validate puts it on the y axis (XYReversal)
	bar.AddSeries("at Low", low, charts.WithBarChartOpts(opts.BarChart{BarGap: "-100%"}))
	bar.AddSeries("at High", high, charts.WithBarChartOpts(opts.BarChart{BarGap: "-100%"}))
	bar.XYReversal()
	return newChart(title, bar)
}

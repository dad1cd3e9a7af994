package labkit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
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
	Option string
	// Height is the chart's CSS height; the width follows the page (at
	// most maxChartWidth).
	Height string
	// csv is the data behind the chart as CSV: one row per run for a
	// chart of a result, the plotted numbers otherwise.
	csv string
}

var chartSeq atomic.Int64

// Chart sizes: the width follows the page up to maxChartWidth.
const (
	maxChartWidth = 960
	chartHeight   = 460
)

// newChart renders c's option as JSON (functions are named by fn, see
// chartjs.go). It does not use RenderSnippet's Option, which go-echarts
// v2.6.7 HTML-escapes.
func newChart(title string, height int, csv string, c interface {
	Validate() // sets the axis data (from SetXAxis) and the assets
	JSONNotEscaped() template.HTML
}) *Chart {
	c.Validate()
	option := finishOption(c.JSONNotEscaped())
	sum := sha256.Sum256([]byte(option))
	id := fmt.Sprintf("synclab-%s-%d", hex.EncodeToString(sum[:6]), chartSeq.Add(1))
	return &Chart{Title: title, ID: id, Option: option, Height: fmt.Sprintf("%dpx", height), csv: csv}
}

// finishOption sets what go-echarts v2.6.7 has no field for: y-axis names
// start at the axis and run right (centred, a long name is cut at the
// chart's left edge), and a log axis over powers of two (cores 1..64) has
// base 2, so that its ticks are the swept values.
func finishOption(js template.HTML) string {
	var opt map[string]any
	if err := json.Unmarshal([]byte(js), &opt); err != nil {
		panic("labkit: go-echarts wrote an option that is not JSON: " + err.Error())
	}
	for _, ax := range axes(opt["yAxis"]) {
		ax["nameTextStyle"] = map[string]any{"align": "left"}
	}
	if xs := axes(opt["xAxis"]); len(xs) == 1 && xs[0]["type"] == "log" && powersOfTwo(opt["series"]) {
		xs[0]["logBase"] = 2
	}
	b, err := json.Marshal(opt)
	if err != nil {
		panic("labkit: chart option: " + err.Error())
	}
	return string(b)
}

// powersOfTwo reports whether every x value of the series' [x, y] data
// items is a power of two.
func powersOfTwo(series any) bool {
	list, _ := series.([]any)
	n := 0
	for _, s := range list {
		m, _ := s.(map[string]any)
		data, _ := m["data"].([]any)
		for _, d := range data {
			item, _ := d.(map[string]any)
			v, _ := item["value"].([]any)
			if len(v) < 2 {
				continue
			}
			x, ok := v[0].(float64)
			if !ok || x <= 0 {
				return false
			}
			if f, _ := math.Frexp(x); f != 0.5 {
				return false
			}
			n++
		}
	}
	return n > 0
}

// axes returns the axis objects of an option's xAxis or yAxis.
func axes(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, a := range list {
		if m, ok := a.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// palette holds the series colours: Tableau's 10 and six more, distinct
// on white and in print.
var palette = []string{
	"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
	"#ff9da7", "#1f3b73", "#8cd17d", "#d37295", "#499894", "#bab0ac", "#a0cbe8", "#86540f",
}

// layout is the frame of a chart: title, subtitle, legend at the bottom,
// toolbox (save as image, data view), tooltips with human numbers.
type layout struct {
	title, subtitle string
	height          int
	legend          []string // legend entries, one per series name
	legendTop       bool     // legend under the title rather than at the bottom
	bottom          int      // space under the plot for the axis name and legend
}

// globals returns the chart-wide options of a layout.
func (l layout) globals() []charts.GlobalOpts {
	legend := opts.Legend{Show: opts.Bool(len(l.legend) > 0), Type: "scroll", Bottom: "0", Data: l.legend}
	top := 88
	if l.legendTop {
		legend.Bottom, legend.Top = "", "50"
		top = 100
	}
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{Width: fmt.Sprintf("%dpx", maxChartWidth), Height: fmt.Sprintf("%dpx", l.height)}),
		charts.WithTitleOpts(opts.Title{Title: l.title, Subtitle: l.subtitle,
			TitleStyle:    &opts.TextStyle{Width: maxChartWidth - 110, Overflow: "break", FontSize: 16},
			SubtitleStyle: &opts.TextStyle{Width: maxChartWidth - 110, Overflow: "break"}}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis", Formatter: fn("axisTooltip")}),
		charts.WithLegendOpts(legend),
		charts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(true), Right: "10", Top: "0", Feature: &opts.ToolBoxFeature{
			SaveAsImage: &opts.ToolBoxFeatureSaveAsImage{Show: opts.Bool(true), Title: "save as image", Name: slug(l.title)},
			DataView: &opts.ToolBoxFeatureDataView{Show: opts.Bool(true), Title: "data view", Lang: []string{"data view", "close", "refresh"},
				BackgroundColor: "#fff"},
		}}),
		charts.WithGridOpts(opts.Grid{Top: fmt.Sprint(top), Left: "24", Right: "48", Bottom: fmt.Sprint(l.bottom), ContainLabel: opts.Bool(true)}),
		charts.WithColorsOpts(palette),
		charts.WithAnimation(false),
	}
}

// slug turns a title into a file name.
func slug(s string) string {
	s = strings.ToLower(s)
	s = regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

// num maps NaN and infinities to nil (a gap in ECharts; JSON has no NaN).
func num(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// useLog reports whether values spanning max/min (all positive) call for a
// logarithmic axis: more than logSpan.
func useLog(values []float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if v <= 0 {
			return false
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi > lo && hi/lo > logSpan
}

// logSpan is the ratio of largest to smallest value beyond which an axis
// is logarithmic.
const logSpan = 30

// axisKind is how numeric x values are laid out: on a linear or a
// logarithmic value axis, or, when they include 0 and the others span
// more than logSpan (0, 10, 100, 1000), evenly spaced as categories.
func axisKind(xs []float64) string {
	var pos []float64
	hasZero := false
	for _, x := range xs {
		if x > 0 {
			pos = append(pos, x)
		}
		hasZero = hasZero || x == 0
	}
	switch {
	case len(pos) < len(xs) && !hasZero:
		return "value" // negative values
	case hasZero && useLog(pos):
		return "category"
	case !hasZero && useLog(xs):
		return "log"
	}
	return "value"
}

// yAxis is a value axis (logarithmic when values span more than logSpan)
// named by its unit, with human numbers on its labels.
func yAxis(unit string, values []float64) opts.YAxis {
	t := "value"
	if useLog(values) {
		t = "log"
	}
	return opts.YAxis{Name: ShowUnit(unit), Type: t, Scale: opts.Bool(t == "value"), NameGap: 12,
		AxisLabel: &opts.AxisLabel{Formatter: fn("num")}}
}

// lineAxis is the y axis of line charts: yAxis, named with its scale when
// logarithmic; a linear one ends at round values around the data, from 0
// when 0 is within one span of it, and when it leaves 0 out (to show how
// close lines move) says so in its name, so that nobody reads a 2% step as
// a doubling.
func lineAxis(unit string, values []float64) opts.YAxis {
	ya := yAxis(unit, values)
	if ya.Type == "log" {
		ya.Name += " (log scale)"
		return ya
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		return ya // no data
	}
	if lo == hi { // a flat line: show it against 0
		ya.Scale = nil
		return ya
	}
	// Zero within one span of the data costs at most half the plot: show it.
	if lo > 0 && lo <= hi-lo {
		lo = 0
	} else if hi < 0 && -hi <= hi-lo {
		hi = 0
	}
	step := niceStep((hi - lo) / 5)
	ya.Min, ya.Max = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	ya.MinInterval, ya.MaxInterval = step, step
	if ya.Min.(float64) > 0 || ya.Max.(float64) < 0 {
		ya.Name += " (not from 0)"
	}
	return ya
}

// niceStep is the smallest of 1, 2 or 5 times a power of ten that is at
// least x (x > 0): a tick interval people read at a glance.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// xAxis is the axis of numeric x values (see axisKind), named below its
// middle so that no name is cut at the chart's edge.
func xAxis(name string, xs []float64) opts.XAxis {
	kind := axisKind(xs)
	ax := opts.XAxis{Name: ShowUnit(name), Type: kind, NameLocation: "middle", NameGap: 28}
	switch kind {
	case "category":
		cats := make([]string, len(xs))
		for i, x := range xs {
			cats[i] = Num(x)
		}
		ax.Data = cats
		ax.Name += " (not to scale)"
	case "log":
		ax.Name += " (log scale)"
		fallthrough
	default:
		ax.Scale = opts.Bool(true)
		ax.AxisLabel = &opts.AxisLabel{Formatter: fn("num")}
	}
	return ax
}

// xCoord is the x coordinate of the i-th of xs on an axis of the given
// kind: the index on a category axis, the value otherwise.
func xCoord(kind string, xs []float64, i int) any {
	if kind == "category" {
		return i
	}
	return num(xs[i])
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Series is a named list of values, one per category or x value.
type Series struct {
	Name   string
	Values []float64
	// Lo and Hi, when set (Lines only), are the bounds of each value's 95%
	// interval, drawn as a band in the series' colour.
	Lo, Hi []float64
}

// seriesStyle gives a series its name's colour (lines, markers and bars).
func seriesStyle(name string) []charts.SeriesOpts {
	c := colorOf(name)
	return []charts.SeriesOpts{charts.WithItemStyleOpts(opts.ItemStyle{Color: c}), charts.WithLineStyleOpts(opts.LineStyle{Color: c, Width: 2})}
}

// names returns the series' names.
func names(series []Series) []string {
	out := make([]string, len(series))
	for i, s := range series {
		out[i] = s.Name
	}
	return out
}

// allValues pools the series' values and interval bounds.
func allValues(series []Series) []float64 {
	var out []float64
	for _, s := range series {
		out = append(append(append(out, s.Values...), s.Lo...), s.Hi...)
	}
	return out
}

// Lines plots plain numbers against a numeric x axis, one line per series:
// an analytic curve beside a simulated one, energy per operation against a
// parameter. series[k].Values[i] is the value at x[i]; NaN, infinities and
// values missing at the end of a shorter series leave gaps, values beyond
// len(x) are ignored. xName names the x axis (with its unit), unit the y
// axis. Axes are logarithmic where the values span more than 30x. A
// series with Lo and Hi gets its interval as a band.
func Lines(title, xName, unit string, x []float64, series ...Series) *Chart {
	return linesChart(title, "", xName, unit, x, series)
}

// linesChart is Lines with a subtitle.
func linesChart(title, subtitle, xName, unit string, x []float64, series []Series) *Chart {
	kind := axisKind(x)
	line := charts.NewLine()
	line.SetGlobalOptions(append(layout{title: title, subtitle: subtitle, height: chartHeight, legend: names(series), bottom: 64}.globals(),
		charts.WithXAxisOpts(xAxis(xName, x)), charts.WithYAxisOpts(lineAxis(unit, allValues(series))))...)
	if kind == "category" {
		line.SetXAxis(xAxis(xName, x).Data)
	}
	for _, s := range series {
		data := make([]opts.LineData, len(x))
		for i := range x {
			y := math.NaN()
			if i < len(s.Values) {
				y = s.Values[i]
			}
			data[i] = opts.LineData{Value: []any{xCoord(kind, x, i), num(y)}}
		}
		line.AddSeries(s.Name, data, seriesStyle(s.Name)...)
		if len(s.Lo) > 0 && len(s.Hi) > 0 {
			var band []opts.CustomData
			for i := range min(len(x), len(s.Lo), len(s.Hi)) {
				band = append(band, opts.CustomData{Value: []any{xCoord(kind, x, i), num(s.Lo[i]), num(s.Hi[i])}})
			}
			c := charts.NewCustom()
			c.AddSeries(s.Name, band, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: fn("band")}),
				charts.WithEncodeOpts(opts.Encode{X: 0, Y: []int{1, 2}}), charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOf(s.Name)}))
			line.Overlap(c)
		}
	}
	return newChart(title, chartHeight, plainCSV(xName, x, series), line)
}

// maxLabelledBars is the most bars a chart labels with their values.
const maxLabelledBars = 12

// Bars draws plain numbers as grouped bars, one group per category and one
// bar per series (each series in its colour, the same in every chart of
// the notebook), each labelled with its value when there are few. With a
// single series each bar takes its category's colour (categories are
// usually variants). The axis is logarithmic where the values span more
// than 30x; NaN leaves a bar out.
func Bars(title, unit string, categories []string, series ...Series) *Chart {
	var legend []string
	if len(series) > 1 {
		legend = names(series)
	}
	return barsChart(barSpec{layout: layout{title: title, height: chartHeight, legend: legend, bottom: 40}, unit: unit,
		categories: categories, byCategory: len(series) == 1, labels: len(categories)*len(series) <= maxLabelledBars,
		csv: categoryCSV(categories, series)}, plainBars(categories, series))
}

// StackedBars stacks series per category (power components per variant,
// energy split by state).
func StackedBars(title, unit string, categories []string, series []Series) *Chart {
	bar := charts.NewBar()
	ya := yAxis(unit, nil)
	ya.Scale = nil // a stack starts at 0
	bar.SetGlobalOptions(append(layout{title: title, height: chartHeight, legend: names(series), bottom: 40}.globals(),
		charts.WithXAxisOpts(categoryAxis()), charts.WithYAxisOpts(ya))...)
	bar.SetXAxis(categories)
	for _, s := range series {
		data := make([]opts.BarData, len(categories))
		for i := range categories {
			v := math.NaN()
			if i < len(s.Values) {
				v = s.Values[i]
			}
			data[i] = opts.BarData{Value: num(v)}
		}
		bar.AddSeries(s.Name, data, append(seriesStyle(s.Name), charts.WithBarChartOpts(opts.BarChart{Stack: "total", BarCategoryGap: "40%"}))...)
	}
	return newChart(title, chartHeight, categoryCSV(categories, series), bar)
}

// categoryAxis is a category axis whose labels all show, wrapped rather
// than hidden or cut.
func categoryAxis() opts.XAxis {
	return opts.XAxis{Type: "category", AxisLabel: &opts.AxisLabel{Interval: "0", Width: 150, Overflow: "break", Margin: 12}}
}

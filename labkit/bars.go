package labkit

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// barGroup is one series of a bar chart: a bar per category it has a value
// in, drawn in the colour of its name.
type barGroup struct {
	name string
	bars []barItem
}

// barItem is one bar: its category, the mean, the interval (NaN bounds: no
// error bar) and the runs drawn as dots.
type barItem struct {
	cat          int
	mean, lo, hi float64
	dots         []float64
}

// barSpec says how to draw groups of bars.
type barSpec struct {
	layout
	unit       string
	categories []string
	// ownCategory puts each group's bars alone in their categories (one
	// bar per variant, centred); otherwise the groups sit side by side.
	ownCategory bool
	// byCategory colours each bar by its category's name instead of its
	// group's.
	byCategory bool
	// labels writes each bar's mean above it.
	labels bool
	csv    string
}

// barsChart draws bars as custom series so that a logarithmic axis keeps
// them starting at the bottom of the plot (ECharts starts bars at 1 there),
// with error bars and dots over the bars they belong to. Bars start at 0
// on a linear axis.
func barsChart(s barSpec, groups []barGroup) *Chart {
	var values []float64
	for _, g := range groups {
		for _, b := range g.bars {
			values = append(values, b.mean, b.lo, b.hi)
			values = append(values, b.dots...)
		}
	}
	ya := yAxis(s.unit, values)
	if ya.Type == "log" {
		ya.Name += " (log scale)"
	} else {
		ya.Scale = nil // bars start at 0
	}
	n, frac := len(groups), 0.8
	if s.ownCategory {
		n, frac = 1, 0.5
	}
	label := 0
	if s.labels {
		label = 1
	}
	c := charts.NewCustom()
	c.SetGlobalOptions(append(s.globals(), charts.WithXAxisOpts(categoryAxis()), charts.WithYAxisOpts(ya))...)
	c.SetXAxis(s.categories)
	for k, g := range groups {
		slot := k
		if s.ownCategory {
			slot = 0
		}
		var items, dots []opts.CustomData
		for _, b := range g.bars {
			top := b.mean
			for _, v := range append([]float64{b.hi}, b.dots...) {
				if v > top {
					top = v
				}
			}
			it := opts.CustomData{Value: []any{b.cat, num(b.mean), num(b.lo), num(b.hi), slot, n, frac, label, num(top)}}
			if s.byCategory {
				it.ItemStyle = &opts.ItemStyle{Color: colorOf(s.categories[b.cat])}
			}
			items = append(items, it)
			for _, d := range b.dots {
				dots = append(dots, opts.CustomData{Value: []any{b.cat, num(d), slot, n, frac}})
			}
		}
		style := charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOf(g.name)})
		c.AddSeries(g.name, items, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: fn("bar")}), style,
			charts.WithEncodeOpts(opts.Encode{X: 0, Y: []int{1, 2, 3}}), charts.WithSeriesId("bar:"+g.name))
		if len(dots) > 0 {
			c.AddSeries(g.name, dots, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: fn("dot")}), style,
				charts.WithEncodeOpts(opts.Encode{X: 0, Y: 1}))
		}
	}
	return newChart(s.title, s.height, s.csv, c)
}

// plainBars turns series of values per category into bar groups (NaN: no
// bar).
func plainBars(categories []string, series []Series) []barGroup {
	var groups []barGroup
	for _, s := range series {
		g := barGroup{name: s.Name}
		for i := range categories {
			if i < len(s.Values) && !math.IsNaN(s.Values[i]) {
				g.bars = append(g.bars, barItem{cat: i, mean: s.Values[i], lo: math.NaN(), hi: math.NaN()})
			}
		}
		groups = append(groups, g)
	}
	return groups
}

package labkit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"synclab/sim"
)

// laneHeight is the height of one timeline lane in pixels.
const laneHeight = 22

// Timeline is a per-core Gantt chart of a trace: one lane per core and trace
// lane (core states, lock ownership, tasks), one colour per label (the
// same in every timeline of the notebook), time in microseconds. The chart
// grows with its lanes; a slider under it zooms.
func Timeline(title string, tr *sim.Trace) *Chart {
	lanes, laneIdx := traceLanes(tr)
	bySeries := map[string][]opts.CustomData{}
	names := make([]string, len(lanes))
	var kinds []string // the lane kinds this trace has, for the subtitle
	for i, k := range lanes {
		names[i] = fmt.Sprintf("core %d %s", k.core, k.lane)
		if !slices.Contains(kinds, k.lane) {
			kinds = append(kinds, k.lane)
		}
	}
	slices.Sort(kinds)
	csv := [][]string{{"core", "lane", "label", "start_us", "end_us"}}
	// The axis spans the trace's window exactly: echarts' rounding put
	// a 200-215 us window on an axis from 198 to 216.
	xa := opts.XAxis{Name: "time (µs)", Type: "value", Scale: opts.Bool(true), NameLocation: "middle", NameGap: 26,
		AxisLabel: &opts.AxisLabel{Formatter: fn("num")}}
	if tr != nil {
		for j, s := range tr.Spans {
			if j == 0 || s.Start.Micros() < xa.Min.(float64) {
				xa.Min = s.Start.Micros()
			}
			if j == 0 || s.End.Micros() > xa.Max.(float64) {
				xa.Max = s.End.Micros()
			}
			i := laneIdx[traceLane{s.Core, s.Lane}]
			bySeries[s.Label] = append(bySeries[s.Label], opts.CustomData{Name: names[i],
				Value: []any{s.Start.Micros(), s.End.Micros(), i}})
			csv = append(csv, []string{strconv.Itoa(s.Core), s.Lane, s.Label,
				strconv.FormatFloat(s.Start.Micros(), 'g', -1, 64), strconv.FormatFloat(s.End.Micros(), 'g', -1, 64)})
		}
	}
	labels := sortedKeys(bySeries)
	height := max(300, 170+laneHeight*len(lanes))
	c := charts.NewCustom()
	c.SetGlobalOptions(append(layout{title: title, height: height, legend: labels, legendTop: true, bottom: 80,
		subtitle: "one lane per core and kind (" + strings.Join(kinds, ", ") + "); drag the slider under the chart or scroll on it to zoom"}.globals(),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item", Formatter: fn("ganttTooltip")}),
		charts.WithXAxisOpts(xa),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: names, Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "slider", XAxisIndex: 0}, opts.DataZoom{Type: "inside", XAxisIndex: 0}))...)
	for _, label := range labels {
		c.AddSeries(label, bySeries[label], charts.WithCustomChartOpts(opts.CustomChart{RenderItem: fn("gantt")}),
			charts.WithEncodeOpts(opts.Encode{X: []int{0, 1}, Y: 2}), charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOf(label)}))
	}
	return newChart(title, height, csvText(csv), c)
}

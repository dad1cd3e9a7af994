package labkit

import (
	"regexp"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/types"
)

// A chart's option is JSON: where ECharts wants a function (a formatter, a
// custom series' renderItem) it holds "synclab:fn:NAME", which the chart's
// script replaces by chartFuncs[NAME] (JavaScript that may call the other
// functions as fns.NAME). Tests can read every option as JSON.
const fnPrefix = "synclab:fn:"

// fn names a function of chartFuncs in an option.
func fn(name string) types.FuncStr { return types.FuncStr(fnPrefix + name) }

// numJS formats numbers in charts (labels, tooltips, axes) like Num, except
// that it writes numbers from 1e-9 to 0.001 out in decimals to 4 significant
// digits (0.0005575, an axis tick 0.0001), where Num switches to scientific
// notation: a chart's reader compares marks against ticks, which e-notation
// hides.
const numJS = `function (v) {
  if (v == null || isNaN(v)) return '-';
  if (typeof v !== 'number') return String(v);
  var a = Math.abs(v);
  if (a !== 0 && a < 1e-3 && a >= 1e-9) return v.toFixed(3 - Math.floor(Math.log10(a))).replace(/0+$/, '');
  if (a !== 0 && (a < 1e-9 || a >= 1e15)) return v.toExponential(3).replace(/\.?0+e/, 'e').replace('e+', 'e');
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  return String(+v.toPrecision(4));
}`

// axisTooltipJS lists the bars' and lines' values at the pointer, formatted
// like Num (intervals and single runs are drawn, not listed; custom series
// drawing bars have ids starting with "bar:").
const axisTooltipJS = `function (ps) {
  ps = Array.isArray(ps) ? ps : [ps];
  var out = ps.length ? ps[0].axisValueLabel + '<br>' : '';
  ps.forEach(function (p) {
    if (p.seriesType !== 'line' && p.seriesType !== 'bar' && String(p.seriesId).indexOf('bar:') !== 0) { return; }
    var v = Array.isArray(p.value) ? p.value[1] : p.value;
    if (v == null) { return; }
    out += p.marker + p.seriesName + ': <b>' + fns.num(v) + '</b><br>';
  });
  return out;
}`

// barJS draws bar k of n in a category band whose bars fill frac of the
// band, from the axis' zero (the bottom of the plot on a log axis, where
// ECharts' own bars would start at 1) to the mean, with an error bar from
// lo to hi when they are numbers, and the mean written when label is 1,
// above the value top (the bar, its error bar or its runs' dots). Items are
// [category, mean, lo, hi, k, n, frac, label, top].
const barJS = `function (params, api) {
  var cat = api.value(0), mean = api.value(1), lo = api.value(2), hi = api.value(3);
  var k = api.value(4), n = api.value(5), frac = api.value(6), label = api.value(7);
  var band = api.size([1, 0])[0], w = band * frac / n, cs = params.coordSys, bottom = cs.y + cs.height;
  var x = api.coord([cat, 0])[0] - band * frac / 2 + w * k, cx = x + w / 2;
  var y = function (v) { var c = api.coord([cat, v])[1]; return isFinite(c) ? Math.min(Math.max(c, cs.y), bottom) : bottom; };
  var kids = [], top = y(mean), base = y(0);
  if (!isNaN(mean)) {
    kids.push({type: 'rect', shape: {x: x + w * 0.06, y: Math.min(top, base), width: w * 0.88, height: Math.max(Math.abs(base - top), 1)}, style: {fill: api.visual('color')}});
  }
  if (!isNaN(lo) && !isNaN(hi)) {
    var a = y(lo), b = y(hi), c = Math.min(w * 0.2, 8), st = {stroke: '#222', lineWidth: 1.5};
    kids.push({type: 'line', shape: {x1: cx, y1: a, x2: cx, y2: b}, style: st});
    kids.push({type: 'line', shape: {x1: cx - c, y1: a, x2: cx + c, y2: a}, style: st});
    kids.push({type: 'line', shape: {x1: cx - c, y1: b, x2: cx + c, y2: b}, style: st});
    top = Math.min(top, b);
  }
  if (label === 1 && !isNaN(mean)) {
    top = Math.min(top, y(api.value(8)) - 4);
    kids.push({type: 'text', style: {text: fns.num(mean), x: cx, y: top - 3, textAlign: 'center', textVerticalAlign: 'bottom', fontSize: 11, fill: '#333'}});
  }
  return {type: 'group', children: kids};
}`

// dotJS draws one run as a dot over bar k of n (items [category, value,
// k, n, frac]).
const dotJS = `function (params, api) {
  var band = api.size([1, 0])[0], w = band * api.value(4) / api.value(3);
  var x = api.coord([api.value(0), 0])[0] - band * api.value(4) / 2 + w * (api.value(2) + 0.5);
  var y = api.coord([api.value(0), api.value(1)])[1];
  if (!isFinite(y)) { return; }
  return {type: 'circle', shape: {cx: x, cy: y, r: 3.5}, style: {fill: api.visual('color'), stroke: '#222', lineWidth: 1}};
}`

// bandJS draws a series' interval as one polygon through its items [x, lo,
// hi] (drawn once, for the first item); a bound at or below 0 on a log
// axis goes to the bottom of the plot.
const bandJS = `function (params, api) {
  if (params.dataIndexInside !== 0) { return; }
  var up = [], down = [], bottom = params.coordSys.y + params.coordSys.height;
  for (var i = 0; i < params.dataInsideLength; i++) {
    var x = api.value(0, i), lo = api.value(1, i), hi = api.value(2, i);
    if (isNaN(lo) || isNaN(hi)) { continue; }
    var a = api.coord([x, hi]), b = api.coord([x, lo]);
    if (!isFinite(b[1])) { b[1] = bottom; }
    up.push(a); down.unshift(b);
  }
  return {type: 'polygon', shape: {points: up.concat(down)}, style: {fill: api.visual('color'), opacity: 0.18}, silent: true};
}`

// ganttJS draws a span [start, end] on lane y as a rectangle clipped to the
// plot area. Data items are [start us, end us, lane index].
const ganttJS = `function (params, api) {
  var y = api.value(2), s = api.coord([api.value(0), y]), e = api.coord([api.value(1), y]);
  var h = api.size([0, 1])[1] * 0.6;
  var r = echarts.graphic.clipRectByRect({x: s[0], y: s[1] - h / 2, width: Math.max(e[0] - s[0], 1), height: h},
    {x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height});
  return r && {type: 'rect', shape: r, style: {fill: api.visual('color')}};
}`

const ganttTooltipJS = `function (p) { return p.seriesName + ' (' + p.name + '): ' + p.value[0].toFixed(3) + ' - ' + p.value[1].toFixed(3) + ' µs'; }`

// chartFuncs are the functions options name with fn.
var chartFuncs = map[string]string{
	"num": numJS, "axisTooltip": axisTooltipJS, "bar": barJS, "dot": dotJS, "band": bandJS,
	"gantt": ganttJS, "ganttTooltip": ganttTooltipJS,
}

var fnRef = regexp.MustCompile(`"` + fnPrefix + `(\w+)"`)

// funcsJS defines, as the object fns, the functions an option names (and
// num, which the others use).
func funcsJS(option string) string {
	used := map[string]bool{"num": true}
	for _, m := range fnRef.FindAllStringSubmatch(option, -1) {
		used[m[1]] = true
	}
	var names []string
	for n := range used {
		if _, ok := chartFuncs[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("var fns = {};\n")
	for _, n := range names {
		b.WriteString("  fns." + n + " = " + chartFuncs[n] + ";\n")
	}
	return b.String()
}

// reviveJS replaces the function names in an option by the functions.
const reviveJS = `function revive(x) {
    if (typeof x === 'string' && x.indexOf('` + fnPrefix + `') === 0) { return fns[x.slice(` + "11" + `)]; }
    if (x && typeof x === 'object') { for (var k in x) { x[k] = revive(x[k]); } }
    return x;
  }`

package labkit

import (
	"fmt"
	"html"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/term"
	"golang.org/x/text/width"

	"synclab/platforms"
)

// Table is a titled table of text cells, printed on a terminal or put in a
// report.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	// Key is the number of leading columns that name a row (metric, swept
	// values): when WriteText splits a table too wide for the terminal
	// into several, each part repeats them.
	Key int
	// Terms explain names the table uses (its metrics' keys): HTML lists
	// them under the table, collapsed; a terminal has lab run NAME -h.
	Terms []Term
}

// Term is a name a table uses and what it means.
type Term struct{ Name, Doc string }

// minColumn is the narrowest a column gets when WriteText wraps its cells.
const minColumn = 12

// WriteText prints t with aligned columns, fitted to the terminal's width
// when w is a terminal (else $COLUMNS, else unlimited): see WriteTextWidth.
func (t Table) WriteText(w io.Writer) { t.WriteTextWidth(w, TerminalWidth(w)) }

// TerminalWidth is the width of w if it is a terminal, else $COLUMNS, else 0
// (no limit).
func TerminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// WriteTextWidth prints t with aligned columns in at most width characters
// per line (0: no limit). A table too wide is split into parts of whole
// columns, each repeating the Key columns; a part still too wide wraps the
// text of its widest columns over several lines.
func (t Table) WriteTextWidth(w io.Writer, width int) {
	natural := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			if i < len(natural) {
				natural[i] = max(natural[i], displayWidth(c))
			}
		}
	}
	if t.Title != "" {
		fmt.Fprintln(w, t.Title)
	}
	for i, cols := range t.parts(natural, width) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		widths := fitWidths(cols, natural, width)
		t.writePart(w, cols, widths)
	}
}

// parts groups the column indexes into parts that fit width, each starting
// with the Key columns.
func (t Table) parts(natural []int, width int) [][]int {
	key := min(max(t.Key, 0), len(natural))
	all := make([]int, len(natural))
	for i := range all {
		all[i] = i
	}
	total := 0
	for _, n := range natural {
		total += n + 2
	}
	if width <= 0 || total-2 <= width || key == 0 || key == len(natural) {
		return [][]int{all}
	}
	keyWidth := 0
	for _, n := range natural[:key] {
		keyWidth += n + 2
	}
	var parts [][]int
	cur, used := slices.Clone(all[:key]), keyWidth
	for c := key; c < len(natural); c++ {
		if len(cur) > key && used+natural[c] > width {
			parts = append(parts, cur)
			cur, used = slices.Clone(all[:key]), keyWidth
		}
		cur = append(cur, c)
		used += natural[c] + 2
	}
	return append(parts, cur)
}

// fitWidths returns the widths of cols: their natural widths, the widest
// narrowed (not below minColumn) until the line fits width.
func fitWidths(cols, natural []int, width int) []int {
	widths := make([]int, len(cols))
	total := -2
	for i, c := range cols {
		widths[i] = natural[c]
		total += widths[i] + 2
	}
	for width > 0 && total > width {
		widest := 0
		for i := range widths {
			if widths[i] > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= minColumn {
			break
		}
		widths[widest]--
		total--
	}
	return widths
}

// writePart prints the header, a rule and the rows of the columns cols with
// the given widths, wrapping cells wider than their column.
func (t Table) writePart(w io.Writer, cols, widths []int) {
	line := func(row []string) {
		cells := make([][]string, len(cols))
		lines := 1
		for i, c := range cols {
			text := ""
			if c < len(row) {
				text = row[c]
			}
			cells[i] = wrapText(text, widths[i])
			lines = max(lines, len(cells[i]))
		}
		for l := range lines {
			var b strings.Builder
			for i, cell := range cells {
				s := ""
				if l < len(cell) {
					s = cell[l]
				}
				b.WriteString(s + strings.Repeat(" ", widths[i]-displayWidth(s)) + "  ")
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	}
	line(t.Header)
	rule := make([]string, len(t.Header))
	for i, c := range cols {
		rule[c] = strings.Repeat("-", widths[i])
	}
	line(rule)
	for _, r := range t.Rows {
		line(r)
	}
}

// wrapText breaks s into lines of at most width columns (displayWidth), at
// spaces where it can.
func wrapText(s string, width int) []string {
	if displayWidth(s) <= width || width <= 0 {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	w := 0 // cur's width
	for _, word := range strings.Fields(s) {
		if w > 0 && w+1+displayWidth(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
			w = 0
		}
		if w > 0 {
			cur.WriteByte(' ')
			w++
		}
		for _, r := range word {
			rw := runeWidth(r)
			if w > 0 && w+rw > width { // a word longer than the column
				lines = append(lines, cur.String())
				cur.Reset()
				w = 0
			}
			cur.WriteRune(r)
			w += rw
		}
	}
	return append(lines, cur.String())
}

// displayWidth is how many terminal columns s takes: two for each wide
// East Asian character (the claims' Chinese section names), none for a
// combining mark, one for any other.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	if unicode.Is(unicode.Mn, r) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// numericCell matches cells that hold a number (with its interval), which
// HTML tables align right.
var numericCell = regexp.MustCompile(`^[-+]?[\d,.]+(e-?\d+)?%?( ± <?[\d,.]+(e-?\d+)?)?$`)

// HTML renders t as an HTML table with its title as caption; cells holding
// numbers are right-aligned (class "n").
func (t Table) HTML() string {
	var b strings.Builder
	b.WriteString(`<table class="synclab">`)
	if t.Title != "" {
		b.WriteString("<caption>" + html.EscapeString(t.Title) + "</caption>")
	}
	b.WriteString("<thead><tr>")
	for _, h := range t.Header {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range r {
			if numericCell.MatchString(c) {
				b.WriteString(`<td class="n">` + html.EscapeString(c) + "</td>")
			} else {
				b.WriteString("<td>" + cellHTML(c) + "</td>")
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	if len(t.Terms) > 0 {
		b.WriteString(`<details class="synclab-terms"><summary>what the names in this table mean</summary><dl>`)
		for _, d := range t.Terms {
			b.WriteString("<dt>" + html.EscapeString(d.Name) + "</dt><dd>" + html.EscapeString(d.Doc) + "</dd>")
		}
		b.WriteString("</dl></details>")
	}
	return b.String()
}

// cellHTML escapes a text cell and lets a long word (a path, an identifier,
// a URL) break after its separators: a column of sources would otherwise
// push the table past the page, where a printed report cuts it off.
func cellHTML(s string) string {
	var b strings.Builder
	word := 0 // runes since the last space
	for _, r := range s {
		b.WriteString(html.EscapeString(string(r)))
		switch {
		case unicode.IsSpace(r):
			word = 0
		case strings.ContainsRune("/_.,=:", r) && word >= 12:
			b.WriteString("<wbr>")
			fallthrough
		default:
			word++
		}
	}
	return b.String()
}

// SummaryTable lists each metric's mean ± 95% CI half-width over the
// successful runs: one row per metric (per sweep point), one column per
// variant, so it stays narrow on a terminal. When runs failed, a "failed
// runs" row per point says how many and why (e.g. "1 of 3 runs failed:
// deadlock at ...").
func SummaryTable(r *Result) Table {
	e := r.Experiment
	title := fmt.Sprintf("%s: mean ± 95%% CI over %d repeats", e.Name, e.Repeats)
	if e.Repeats < 2 {
		title = fmt.Sprintf("%s: one run per variant and point (no interval)", e.Name)
	}
	if total, err := RunCount(e); err == nil && !r.Complete && len(r.Runs) < r.Shard.size(total) {
		title = fmt.Sprintf("%s: mean ± 95%% CI over the runs finished before the interruption, %d of %d", e.Name, len(r.Runs), r.Shard.size(total))
	}
	t := Table{Title: title, Key: len(e.Sweep) + 1}
	for _, m := range e.Metrics {
		t.Terms = append(t.Terms, Term{m.Name, metricDoc(m)})
	}
	for _, a := range e.Sweep {
		t.Header = append(t.Header, a.Param)
	}
	t.Header = append(append(t.Header, "metric"), e.VariantNames()...)
	// sums[p][j][i]: point p, metric j, variant i.
	points := e.Points()
	sums := make([][][]Summary, len(points))
	for p := range points {
		sums[p] = make([][]Summary, len(e.Metrics))
		for j, m := range e.Metrics {
			for _, v := range e.Variants {
				sums[p][j] = append(sums[p][j], r.Summary(v.Name, p, m.Name))
			}
		}
	}
	// One unit per metric down the whole sweep, so that its rows compare at
	// a glance (a point's own unit would switch from µs to ms between rows).
	factors, units := make([]float64, len(e.Metrics)), make([]string, len(e.Metrics))
	for j, m := range e.Metrics {
		var means []float64
		for p := range points {
			for _, s := range sums[p][j] {
				if s.N > 0 {
					means = append(means, s.Mean)
				}
			}
		}
		factors[j], units[j] = rowUnit(m.Unit, means...)
	}
	ranged := false // a cell shows its runs' range
	for p, pt := range points {
		present, notes := false, make([]string, len(e.Variants))
		for i, v := range e.Variants {
			notes[i] = r.failureNote(v.Name, p)
			present = present || notes[i] != "" || len(r.runsAt(v.Name, p, false)) > 0
		}
		if !present {
			continue // not in this shard
		}
		var lead []string
		for _, a := range e.Sweep {
			lead = append(lead, Num(pt[a.Param]))
		}
		for j, m := range e.Metrics {
			f := factors[j]
			row := append(slices.Clone(lead), scaledLabel(m.Name, m.Unit, units[j]))
			for _, s := range sums[p][j] {
				cell := ""
				if s.N > 0 {
					cell = MeanCI(s.Scale(f))
					ranged = ranged || runsOnOneSide(s)
				}
				row = append(row, cell)
			}
			t.Rows = append(t.Rows, row)
		}
		if slices.ContainsFunc(notes, func(n string) bool { return n != "" }) {
			t.Rows = append(t.Rows, append(append(slices.Clone(lead), "failed runs"), notes...))
		}
	}
	if ranged {
		t.Title += rangeNote
	}
	return t
}

// rangeNote tells a table's reader what a cell without an interval shows
// (see MeanCI), in the titles of the tables that have one.
const rangeNote = "; (runs a to b): the runs' range, where the interval would cross zero and no run does"

// metricDoc says what a metric is, its unit, which way is better and when
// it has no value: "time per increment (ns; lower is better)".
func metricDoc(m platforms.Metric) string {
	var in []string
	if m.Unit != "" {
		in = append(in, ShowUnit(m.Unit))
	}
	if m.Better != platforms.Neither {
		in = append(in, string(m.Better)+" is better")
	}
	if m.None != "" {
		in = append(in, `"-" when `+m.None)
	}
	if len(in) == 0 {
		return m.Doc
	}
	return m.Doc + " (" + strings.Join(in, "; ") + ")"
}

// MetricLabel is a metric's name with its unit, as tables, charts and lab
// run -h name it: "ns_per_op (ns)", "counter" when it has none.
func MetricLabel(m platforms.Metric) string { return scaledLabel(m.Name, m.Unit, m.Unit) }

// scaledLabel is MetricLabel for values shown in unit shown instead of the
// metric's own unit (see rowUnit). A name that ends in its own unit says
// so: "max_wait_ms (µs, not ms)", or a reader trusting the name would read
// 4,309 µs as 4,309 ms.
func scaledLabel(name, unit, shown string) string {
	if shown == "" {
		return name
	}
	return name + " (" + shownUnit(name, unit, shown) + ")"
}

// shownUnit is scaledLabel's unit alone, for a table with a unit column.
func shownUnit(name, unit, shown string) string {
	shown = ShowUnit(shown)
	if shown != ShowUnit(unit) && strings.HasSuffix(name, "_"+unit) {
		shown += ", not " + ShowUnit(unit)
	}
	return shown
}

// FailuresTable lists the failed runs of r: variant, swept values, repeat,
// seed and error. It has no rows when every run succeeded.
func FailuresTable(r *Result) Table {
	e := r.Experiment
	failed := r.Failures()
	t := Table{Title: fmt.Sprintf("%s: %d of %d runs failed (left out of the statistics)", e.Name, len(failed), len(r.Runs)),
		Header: []string{"variant"}}
	for _, a := range e.Sweep {
		t.Header = append(t.Header, a.Param)
	}
	t.Header = append(t.Header, "repeat", "seed", "error")
	points := e.Points()
	for _, run := range failed {
		row := []string{run.Variant}
		for _, a := range e.Sweep {
			row = append(row, Num(points[run.Point][a.Param]))
		}
		t.Rows = append(t.Rows, append(row, fmt.Sprint(run.Repeat), fmt.Sprint(run.Seed), run.Err))
	}
	return t
}

// ClaimsTable shows article vs simulated numbers, how the model compares
// with the article ("36x lower"), direction and verdict, one row per claim,
// and in its title where the simulated side comes from (Claim.At); a variant
// whose runs all failed shows "failed" instead of a simulated number.
func ClaimsTable(claims []Claim) Table {
	title := "Claims: article vs simulated"
	if len(claims) > 0 {
		title += ", at " + claims[0].At
	}
	t := Table{Title: title, Key: 1,
		Header: []string{"metric", "unit", "article", "simulated (mean ± 95% CI)", "model vs article", "direction", "verdict"}}
	for _, c := range claims {
		var vals []float64
		for _, s := range c.Sides {
			vals = append(vals, s.Article)
			if s.Sim.N > 0 {
				vals = append(vals, s.Sim.Mean)
			}
		}
		f, unit := rowUnit(c.Unit, vals...)
		var art, sim, dev []string
		for _, s := range c.Sides {
			art = append(art, s.Variant+" "+Num(f*s.Article))
			if s.Sim.N == 0 {
				sim = append(sim, s.Variant+" failed")
				dev = append(dev, s.Variant+" -")
				continue
			}
			sim = append(sim, s.Variant+" "+MeanCI(s.Sim.Scale(f)))
			dev = append(dev, s.Variant+" "+Relative(s.Sim.Mean, s.Article))
		}
		if c.Scope != "" {
			dev = []string{"not comparable (verdict)"}
		}
		t.Rows = append(t.Rows, []string{c.Metric, shownUnit(c.Metric, c.Unit, unit), strings.Join(art, " / "), strings.Join(sim, " / "), strings.Join(dev, " / "), c.Direction, c.Verdict})
	}
	return t
}

// VariantsTable lists an experiment's variants with their descriptions.
func VariantsTable(e platforms.Experiment) Table {
	t := Table{Title: "variants of " + e.Name + " (-variant NAME)", Header: []string{"variant", "description"}}
	for _, v := range e.Variants {
		t.Rows = append(t.Rows, []string{v.Name, v.Doc})
	}
	return t
}

// ParamsTable lists parameters with value (exact: a report must show the
// value that ran, not a rounding of it), unit, provenance, accepted range
// (or choices), plausible range for ASSUME, description (what a coded
// value means) and source.
func ParamsTable(title string, ps platforms.Params) Table {
	t := Table{Title: title, Header: []string{"parameter", "value", "unit", "prov", "accepted", "plausible", "description", "source"}}
	sorted := ps.Clone()
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for _, p := range sorted {
		accepted := "[" + Exact(p.Min) + ", " + Exact(p.Max) + "]"
		if len(p.Choices) > 0 {
			accepted = "one of " + platforms.FormatValues(p.Choices)
		}
		plausible := ""
		if p.Prov == platforms.ASSUME {
			plausible = Exact(p.Low) + " – " + Exact(p.High)
		}
		t.Rows = append(t.Rows, []string{p.Key, Exact(p.Value), ShowUnit(p.Unit), string(p.Prov), accepted, plausible, p.Doc, p.Source})
	}
	return t
}

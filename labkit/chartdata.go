package labkit

import (
	"encoding/csv"
	"strconv"
	"strings"
)

// csvText renders rows as CSV.
func csvText(rows [][]string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.WriteAll(rows) // a strings.Builder does not fail
	return b.String()
}

// fmtCSV formats a number for CSV: exact, "" for NaN.
func fmtCSV(x float64) string {
	if x != x {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// plainCSV is the data of a chart of series against numeric x values: a
// column of x, then one per series.
func plainCSV(xName string, x []float64, series []Series) string {
	keys := make([]string, len(x))
	for i, v := range x {
		keys[i] = fmtCSV(v)
	}
	return seriesCSV(xName, keys, series)
}

// categoryCSV is the data of a chart of series over categories.
func categoryCSV(categories []string, series []Series) string {
	return seriesCSV("category", categories, series)
}

// seriesCSV writes one row per key: the key, then each series' value there.
func seriesCSV(keyName string, keys []string, series []Series) string {
	header := []string{keyName}
	for _, s := range series {
		header = append(header, s.Name)
		if len(s.Lo) > 0 {
			header = append(header, s.Name+" 95% low", s.Name+" 95% high")
		}
	}
	rows := [][]string{header}
	at := func(xs []float64, i int) string {
		if i < len(xs) {
			return fmtCSV(xs[i])
		}
		return ""
	}
	for i, k := range keys {
		row := []string{k}
		for _, s := range series {
			row = append(row, at(s.Values, i))
			if len(s.Lo) > 0 {
				row = append(row, at(s.Lo, i), at(s.Hi, i))
			}
		}
		rows = append(rows, row)
	}
	return csvText(rows)
}

// csv is the data behind a chart of r: one row per run (WriteCSV).
func (r *Result) csv() string {
	var b strings.Builder
	if err := r.WriteCSV(&b); err != nil {
		return "" // a strings.Builder does not fail; no link then
	}
	return b.String()
}

package labkit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestDisplayWaitsForTheOutput checks that every display in a notebook is
// followed by a gonbui.Sync, so a cell that ends right after it keeps it.
func TestDisplayWaitsForTheOutput(t *testing.T) {
	fakeECharts(t, "/*LIB*/")
	var events []string
	oldIn, oldDisplay, oldSync := inNotebook, displayHTML, syncNotebook
	t.Cleanup(func() { inNotebook, displayHTML, syncNotebook = oldIn, oldDisplay, oldSync })
	inNotebook = func() bool { return true }
	displayHTML = func(h string) {
		switch {
		case strings.Contains(h, "/*LIB*/"):
			events = append(events, "library")
		case strings.Contains(h, "<table"):
			events = append(events, "table")
		default:
			events = append(events, "charts")
		}
	}
	syncNotebook = func() { events = append(events, "sync") }
	chart := Lines("c", "x", "y", []float64{1}, Series{Name: "s", Values: []float64{1}})
	tests := []struct {
		name   string
		tmpDir bool // GONB_TMP_DIR set: the library is sent once per kernel session
		call   func()
		want   []string
	}{
		{"InitNotebook", true, InitNotebook, []string{"library", "sync"}},
		{"Display, library already sent", true, func() { InitNotebook(); events = nil; Display(chart) }, []string{"charts", "sync"}},
		{"Display, first in the session", true, func() { Display(chart) }, []string{"library", "charts", "sync"}},
		{"Display without a session directory", false, func() { Display(chart, chart) }, []string{"library", "charts", "sync"}},
		{"DisplayTable", true, func() { DisplayTable(Table{Header: []string{"a"}}) }, []string{"table", "sync"}},
	}
	for _, tc := range tests {
		events = nil
		dir := ""
		if tc.tmpDir {
			dir = t.TempDir()
		}
		t.Setenv("GONB_TMP_DIR", dir)
		tc.call()
		if !slices.Equal(events, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, events, tc.want)
		}
	}
}

// TestChartHTMLEscapesScriptEnd checks that a title or series name holding
// "</script>" cannot end the chart's <script> element early.
func TestChartHTMLEscapesScriptEnd(t *testing.T) {
	title := `p99 </script><script>alert("title")</script>`
	chart := Lines(title, "x", "y", []float64{1}, Series{Name: "</SCRIPT >series", Values: []float64{1}})
	h := chart.HTML()
	if n := strings.Count(strings.ToLower(h), "</script"); n != 1 {
		t.Errorf("chart HTML has %d </script, want 1 (its own end):\n%s", n, h)
	}
	// The escaped option is still the same JSON.
	_, call, _ := strings.Cut(h, "chart.setOption(revive(")
	option, _, ok := strings.Cut(call, "));\n")
	if !ok {
		t.Fatalf("no setOption call in\n%s", h)
	}
	var opt struct {
		Title  struct{ Text string }
		Series []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(option), &opt); err != nil {
		t.Fatalf("embedded option is not JSON: %v", err)
	}
	if opt.Title.Text != title || len(opt.Series) != 1 || opt.Series[0].Name != "</SCRIPT >series" {
		t.Errorf("embedded option: title %q, series %+v", opt.Title.Text, opt.Series)
	}
}

package labkit

import (
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

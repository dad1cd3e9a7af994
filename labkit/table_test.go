package labkit

import (
	"slices"
	"testing"
)

// A long word in a table cell may break after its separators; short words,
// numbers and the escaping stay as they were.
func TestCellHTMLBreaksLongWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"no (set from it: same_cluster_ns)", "no (set from it: same_cluster_<wbr>ns)"},
		{"components/idf_test/include/idf_performance.h", "components/idf_<wbr>test/<wbr>include/<wbr>idf_<wbr>performance.<wbr>h"},
		{"a <b> & c.d", "a &lt;b&gt; &amp; c.d"},
		{"1,234,567.5", "1,234,567.5"},
	} {
		if got := cellHTML(tc.in); got != tc.want {
			t.Errorf("cellHTML(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestClaimsTableScalesTinyValues(t *testing.T) {
	c := Claim{Metric: "max_lock_wait_ms", Unit: "ms", Sides: []ClaimSide{
		{Variant: "global", Article: 3.2, Sim: Summary{N: 3, Mean: 4.314, Half: 1.431}},
		{Variant: "percpu", Article: 0.4, Sim: Summary{N: 3, Mean: 1.228e-4}},
	}}
	row := ClaimsTable([]Claim{c}).Rows[0]
	want := []string{"max_lock_wait_ms", "µs", "global 3,200 / percpu 400", "global 4,314 ± 1,431 / percpu 0.1228 ± 0", "global 35% higher / percpu 3,257x lower"}
	if !slices.Equal(row[:5], want) {
		t.Errorf("row = %q\nwant %q", row[:5], want)
	}
}

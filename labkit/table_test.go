package labkit

import "testing"

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

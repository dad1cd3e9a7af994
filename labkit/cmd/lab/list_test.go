package main

import "testing"

// lab list and lab run NAME -h show a description's first sentence; an
// abbreviation's full stop does not end it (generic-pingpong's stopped at
// "in clusters of per_cluster, e.g.").
func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"One. Two.":                              "One.",
		"Clusters of four, e.g. the Pi 4. More.": "Clusters of four, e.g. the Pi 4.",
		"A (i.e. B) and C. D":                    "A (i.e. B) and C.",
		"No stop":                                "No stop",
		"Ends with e.g. ":                        "Ends with e.g. ",
		"First line. Rest\nsecond line":          "First line.",
		"Line one\nLine two. Three":              "Line one",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

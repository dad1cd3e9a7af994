package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

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

// lab list counts variants in English: "1 variant", "2 variants" (a listing
// in the tour once printed "esp32-perf-tests esp32 1 variants").
func TestListVariantCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 variants", 1: "1 variant", 2: "2 variants", 6: "6 variants"} {
		if got := variantCount(n); got != want {
			t.Errorf("variantCount(%d) = %q, want %q", n, got, want)
		}
	}
	var out, errOut bytes.Buffer
	if err := cmdList(nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, e := range experiments() {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, e.Name+" ") })
		if i < 0 {
			t.Errorf("no line for %s:\n%s", e.Name, out.String())
			continue
		}
		if want := variantCount(len(e.Variants)) + " "; !strings.Contains(lines[i]+" ", "  "+want) {
			t.Errorf("%s has %d variants; its line lacks %q: %s", e.Name, len(e.Variants), want, lines[i])
		}
	}
	if strings.Contains(out.String(), " 1 variants") {
		t.Errorf("lab list says \"1 variants\":\n%s", out.String())
	}
}

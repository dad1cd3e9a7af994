package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// lab bench -against builds the lab command at a revision and times an
// experiment with it and with the current one: both sides' best times and
// their ratio, with no note when the results are the same. A revision that
// does not exist is an error naming it.
func TestBenchAgainst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command twice")
	}
	now := buildLab(t)
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	fig := benchFigures{}
	root, commit, err := resolveRevision(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if err := benchAgainst(context.Background(), fig, note, root, commit, []string{"esp32-pingpong"}, 2, now); err != nil {
		t.Fatal(err)
	}
	before, _ := fig["esp32_pingpong_wall_s_before"].(float64)
	after, _ := fig["esp32_pingpong_wall_s_after"].(float64)
	speedup, _ := fig["esp32_pingpong_speedup"].(float64)
	if before <= 0 || after <= 0 || speedup != before/after {
		t.Errorf("figures %v: want both wall times > 0 and their ratio", fig)
	}
	if rev, _ := fig["against_revision"].(string); rev == "" || rev == "HEAD" {
		t.Errorf("against_revision = %q, want HEAD's commit", rev)
	}
	if len(notes) > 0 {
		t.Errorf("HEAD against the working tree: notes %q, want none (esp32-pingpong's results are the same)", notes)
	}
	_, _, err = resolveRevision(context.Background(), "no-such-revision")
	if err == nil || !strings.Contains(err.Error(), `revision "no-such-revision"`) {
		t.Errorf("unknown revision: %v, want an error naming it", err)
	}
}

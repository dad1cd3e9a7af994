package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/platforms"
)

// mdCells splits a Markdown table row on its unescaped "|" (one preceded
// by an even number of backslashes) and returns the cells, trimmed.
func mdCells(row string) []string {
	var cells []string
	var cur strings.Builder
	backslashes := 0
	for _, r := range row {
		if r == '|' && backslashes%2 == 0 {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			backslashes = 0
			continue
		}
		if r == '\\' {
			backslashes++
		} else {
			backslashes = 0
		}
		cur.WriteRune(r)
	}
	cells = append(cells, strings.TrimSpace(cur.String()))
	// "| a | b |" splits into "", "a", "b", "".
	return cells[1 : len(cells)-1]
}

// mdBlock is one platform's <details> block, parsed back.
type mdBlock struct {
	platform string
	count    int        // N in the summary "NAME (N parameters)"
	rows     [][]string // table body rows, cells unescaped
}

var summaryRe = regexp.MustCompile(`^<details><summary>(\S+) \((\d+) parameters?\)</summary>$`)

// parseParamsMarkdown reads what paramsMarkdown writes, failing t on any
// structural problem: a summary line followed by a blank line (GitHub needs
// it to render the table inside <details>), the header, the alignment row,
// rows of exactly seven cells, a blank line and </details>.
func parseParamsMarkdown(t *testing.T, md string) []mdBlock {
	t.Helper()
	var blocks []mdBlock
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		m := summaryRe.FindStringSubmatch(lines[i])
		if m == nil {
			if lines[i] != "" {
				t.Fatalf("line %d: want a <details><summary> line or a blank line, got %q", i+1, lines[i])
			}
			continue
		}
		n, _ := strconv.Atoi(m[2])
		b := mdBlock{platform: m[1], count: n}
		if lines[i+1] != "" || !strings.HasPrefix(lines[i+2], "Experiments: `") || lines[i+3] != "" {
			t.Fatalf("%s: want a blank line, the experiments and a blank line after the summary, got %q", b.platform, lines[i+1:i+4])
		}
		if got := mdCells(lines[i+4]); strings.Join(got, ",") != "parameter,value,unit,provenance,accepted,plausible (ASSUME),description,source" {
			t.Fatalf("%s: header %q", b.platform, got)
		}
		if got := mdCells(lines[i+5]); len(got) != 8 || strings.Trim(got[0], "-:") != "" {
			t.Fatalf("%s: alignment row %q", b.platform, lines[i+5])
		}
		i += 6
		for ; strings.HasPrefix(lines[i], "|"); i++ {
			cells := mdCells(lines[i])
			if len(cells) != 8 {
				t.Fatalf("%s: row %q has %d cells, want 8", b.platform, lines[i], len(cells))
			}
			b.rows = append(b.rows, cells)
		}
		if lines[i] != "" || lines[i+1] != "</details>" {
			t.Fatalf("%s: table not closed by a blank line and </details>: %q", b.platform, lines[i:min(i+2, len(lines))])
		}
		i++
		blocks = append(blocks, b)
	}
	return blocks
}

func TestPlatformsMarkdownCoversEveryParameterInOrder(t *testing.T) {
	code, out, stderr := runCLI(t, "platforms", "-md")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, again, _ := runCLI(t, "platforms", "-md"); again != out {
		t.Error("lab platforms -md is not deterministic")
	}
	groups := labkit.PlatformParams(experiments())
	blocks := parseParamsMarkdown(t, out)
	if len(blocks) != len(groups) {
		t.Fatalf("%d blocks, want one per platform (%d)", len(blocks), len(groups))
	}
	seen := map[string]bool{}
	for i, b := range blocks {
		g := groups[i]
		seen[b.platform] = true
		if b.platform != g.Platform || b.count != len(g.Params) || len(b.rows) != len(g.Params) {
			t.Errorf("block %d: %s with %d parameters (%d rows), want %s with %d", i, b.platform, b.count, len(b.rows), g.Platform, len(g.Params))
			continue
		}
		for j, row := range b.rows {
			if j > 0 && b.rows[j-1][0] >= row[0] {
				t.Errorf("%s: %q listed after %q, want keys in ascending order", b.platform, row[0], b.rows[j-1][0])
			}
			key := strings.ReplaceAll(row[0], `\_`, "_")
			p, ok := g.Params.Lookup(key)
			if !ok {
				t.Errorf("%s: row for unknown parameter %q", b.platform, key)
				continue
			}
			if v, err := strconv.ParseFloat(strings.ReplaceAll(row[1], ",", ""), 64); err != nil || v != p.Value { // thousands separated
				t.Errorf("%s %s: value %q, want %g exactly", b.platform, key, row[1], p.Value)
			}
			if row[3] != string(p.Prov) {
				t.Errorf("%s %s: provenance %q, want %s", b.platform, key, row[3], p.Prov)
			}
			if (p.Prov == platforms.ASSUME) != (row[5] != "") {
				t.Errorf("%s %s (%s): plausible range %q; want one exactly for ASSUME", b.platform, key, p.Prov, row[5])
			}
			if row[6] != mdEscape(p.Doc) {
				t.Errorf("%s %s: description %q, want %q", b.platform, key, row[6], mdEscape(p.Doc))
			}
			if p.Source != "" && row[7] == "" {
				t.Errorf("%s %s: source missing", b.platform, key)
			}
		}
	}
	for _, name := range []string{"esp32", "generic", "rk3399"} {
		if !seen[name] {
			t.Errorf("no table for platform %s", name)
		}
	}
	// The ESP32 notify experiment's CPU clock accepts only three settings.
	if !strings.Contains(out, "| cpu_mhz | 240 | MHz | CODE | one of 80, 160, 240 |  | ") {
		t.Error("cpu_mhz row: want its choices as the accepted range and no plausible range")
	}
}

func TestPlatformsMarkdownSelectsByPlatformOrExperiment(t *testing.T) {
	for _, name := range []string{"rk3399", "per-cpu-split"} {
		code, out, stderr := runCLI(t, "platforms", name, "-md")
		if code != 0 {
			t.Fatalf("lab platforms %s -md: exit %d: %s", name, code, stderr)
		}
		blocks := parseParamsMarkdown(t, out)
		if len(blocks) != 1 || blocks[0].platform != "rk3399" {
			t.Errorf("lab platforms %s -md: %d blocks, want rk3399 alone:\n%s", name, len(blocks), out)
		}
	}
	// Without -md the aligned text table is unchanged.
	if code, out, _ := runCLI(t, "platforms", "cli-bench"); code != 0 || !strings.Contains(out, "platform cli-bench (experiments: cli-deadlock, cli-fixture)") || strings.Contains(out, "<details>") {
		t.Errorf("lab platforms cli-bench: exit %d\n%s", code, out)
	}
}

// TestPlatformsOfAnExperimentListItsKeys: lab platforms EXPERIMENT lists
// the keys lab run EXPERIMENT -set takes, not every key of its platform
// (rk3399-wake has no cs_us, rk3399-spinlock-wait no holder_cpu).
func TestPlatformsOfAnExperimentListItsKeys(t *testing.T) {
	for _, tc := range []struct{ name, has, hasNot string }{
		{"rk3399-wake", "holder_cpu", "cs_us"},
		{"rk3399-spinlock-wait", "cs_us", "holder_cpu"},
	} {
		code, out, stderr := runCLI(t, "platforms", tc.name)
		keys := map[string]bool{}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				keys[f[0]] = true
			}
		}
		if code != 0 || !keys[tc.has] || keys[tc.hasNot] || !strings.HasPrefix(out, "experiment "+tc.name+" (platform rk3399)") {
			t.Errorf("lab platforms %s: exit %d, %s listed %v, %s listed %v\n%s%s", tc.name, code, tc.has, keys[tc.has], tc.hasNot, keys[tc.hasNot], out, stderr)
		}
	}
}

func TestParamsMarkdownEscapesCells(t *testing.T) {
	g := labkit.PlatformGroup{Platform: "odd", Experiments: []string{"odd-exp"}, Params: platforms.Params{
		{Key: "b_key", Value: 1.5, Unit: "a|b", Prov: platforms.ASSUME, Min: 0, Max: 1e6, Low: 1, High: 2, Doc: "one *line* | size",
			Source: "x | y\nnext line; __attribute__ *not bold* `code` <stdatomic.h> A72<->A53 back\\slash\\| ~strike~"},
		{Key: "a", Value: 8, Unit: "bytes", Prov: platforms.CODE, Min: 0, Max: 64, Choices: []float64{8, 64}},
	}}
	blocks := parseParamsMarkdown(t, paramsMarkdown([]labkit.PlatformGroup{g}))
	if len(blocks) != 1 || blocks[0].count != 2 || len(blocks[0].rows) != 2 {
		t.Fatalf("blocks %+v", blocks)
	}
	a, b := blocks[0].rows[0], blocks[0].rows[1]
	if strings.Join(a, ",") != "a,8,bytes,CODE,one of 8, 64,,," {
		t.Errorf("row a: %q", a)
	}
	want := []string{"b_key", "1.5", `a\|b`, "ASSUME", "0 – 1,000,000", "1 – 2", `one \*line\* \| size`,
		"x \\| y next line; \\_\\_attribute\\_\\_ \\*not bold\\* \\`code\\` &lt;stdatomic.h> A72<->A53 back\\\\slash\\\\\\| \\~strike\\~"}
	for i := range want {
		if b[i] != want[i] {
			t.Errorf("row b cell %d: %q, want %q", i, b[i], want[i])
		}
	}
}

func TestMdEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, 1,000 cycles (BOUND)", "plain text, 1,000 cycles (BOUND)"},
		{"a|b", `a\|b`},
		{"tick_sched_timer", "tick_sched_timer"}, // intraword: no emphasis in GFM
		{"_x_", `\_x\_`},
		{"<= 1 us, < 290, A72<->A53", "<= 1 us, < 290, A72<->A53"},
		{"<b>, </b>, <!-- c -->", "&lt;b>, &lt;/b>, &lt;!-- c -->"},
		{"two\r\nlines\n", "two lines "},
	}
	for _, tc := range tests {
		if got := mdEscape(tc.in); got != tc.want {
			t.Errorf("mdEscape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPlatformsReadmeRewritesBetweenMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	before := "# Title\n\n## Platform parameters\n\nIntro.\n\n" + paramsBegin + "\nstale table\n" + paramsEnd + "\n\n## After\n\nkept\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "platforms", "-readme", path)
	if code != 0 || !strings.Contains(out, "rewritten") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	got, _ := os.ReadFile(path)
	_, md, _ := runCLI(t, "platforms", "-md")
	want := "# Title\n\n## Platform parameters\n\nIntro.\n\n" + paramsBegin + "\n\n" + md + "\n" + paramsEnd + "\n\n## After\n\nkept\n"
	if string(got) != want {
		t.Fatalf("rewritten file:\n%s\nwant:\n%s", got, want)
	}
	info, _ := os.Stat(path)
	if code, out, _ := runCLI(t, "platforms", "-readme", path); code != 0 || !strings.Contains(out, "already up to date") {
		t.Errorf("second run: exit %d, %q", code, out)
	}
	if again, _ := os.ReadFile(path); string(again) != want {
		t.Error("a second run changed the file")
	}
	if info2, _ := os.Stat(path); !info2.ModTime().Equal(info.ModTime()) {
		t.Error("an up-to-date file was rewritten")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	noMarkers := filepath.Join(t.TempDir(), "plain.md")
	os.WriteFile(noMarkers, []byte("# nothing to replace\n"), 0o644)
	if code, _, stderr := runCLI(t, "platforms", "-readme", noMarkers); code != 2 || !strings.Contains(stderr, "want exactly one "+paramsBegin) {
		t.Errorf("file without markers: exit %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(noMarkers); string(b) != "# nothing to replace\n" {
		t.Error("a file without markers was changed")
	}
	reversed := filepath.Join(t.TempDir(), "reversed.md")
	os.WriteFile(reversed, []byte(paramsEnd+"\n"+paramsBegin+"\n"), 0o644)
	if code, _, stderr := runCLI(t, "platforms", "-readme", reversed); code != 2 || !strings.Contains(stderr, "comes before") {
		t.Errorf("markers in the wrong order: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "platforms", "esp32", "-readme", path); code != 2 || !strings.Contains(stderr, "every platform") {
		t.Errorf("-readme with a NAME: exit %d, %q", code, stderr)
	}
}

func TestPlatformsReadmeKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte(paramsBegin+"\nstale\n"+paramsEnd+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o664); err != nil { // a mode the umask would narrow
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, "platforms", "-readme", path); code != 0 || !strings.Contains(out, "rewritten") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o664 {
		t.Errorf("README mode %v (%v), want -rw-rw-r--", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

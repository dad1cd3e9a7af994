package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"synclab/labkit"
	"synclab/platforms"
)

// The markers around the generated parameter tables in README.md.
const (
	paramsBegin = "<!-- params:begin -->"
	paramsEnd   = "<!-- params:end -->"
)

// cmdPlatforms prints the parameters of every platform, or of the one
// platform named (or the platform of the experiment named): as aligned text,
// as Markdown with -md, or spliced into a file between the params markers
// with -readme FILE.
func cmdPlatforms(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("platforms", stdout)
	md := fs.Bool("md", false, "print Markdown tables, one <details> block per platform (what README.md carries)")
	readme := fs.String("readme", "", "rewrite the tables between "+paramsBegin+" and "+paramsEnd+" in this file (all platforms)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return extraArgs("platforms", pos[1:], "it takes at most one NAME, a platform or an experiment")
	}
	groups := labkit.PlatformParams(experiments())
	if *readme != "" {
		if len(pos) > 0 {
			return badInput("platforms -readme rewrites every platform's table; drop %q", pos[0])
		}
		if *md {
			return badInput("platforms -readme writes the Markdown tables into the file: drop -md")
		}
		changed, err := updateReadme(*readme, groups)
		if err != nil {
			return err
		}
		if changed {
			fmt.Fprintf(stdout, "%s: parameter tables rewritten\n", *readme)
		} else {
			fmt.Fprintf(stdout, "%s: parameter tables already up to date\n", *readme)
		}
		return nil
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Platform)
	}
	var shown []labkit.PlatformGroup
	for _, g := range groups {
		if len(pos) == 1 && pos[0] != g.Platform {
			continue
		}
		shown = append(shown, g)
	}
	if len(pos) == 1 && len(shown) == 0 {
		e, err := lookup(pos[0])
		if err != nil {
			return badInput("unknown platform or experiment %q; platforms: %s", pos[0], strings.Join(names, ", "))
		}
		// An experiment: its own parameters, the -set keys it takes, not
		// every key of its platform.
		shown = labkit.PlatformParams([]platforms.Experiment{e})
	}
	if *md {
		_, err := io.WriteString(stdout, paramsMarkdown(shown))
		return err
	}
	for _, g := range shown {
		title := fmt.Sprintf("platform %s (experiments: %s)", g.Platform, strings.Join(g.Experiments, ", "))
		if len(pos) == 1 && pos[0] != g.Platform {
			title = fmt.Sprintf("experiment %s (platform %s): its parameters, the keys of lab run %s -set", pos[0], g.Platform, pos[0])
		}
		labkit.ParamsTable(title, g.Params).WriteText(stdout)
		fmt.Fprintln(stdout)
	}
	return nil
}

// paramsMarkdown renders one collapsible Markdown table per platform, in the
// order given (labkit.PlatformParams sorts by platform), rows sorted by
// parameter key: parameter, value, unit, provenance, accepted range,
// plausible range (ASSUME only), description and source. Blocks are separated by a blank
// line and the text ends in a newline.
func paramsMarkdown(groups []labkit.PlatformGroup) string {
	var b strings.Builder
	for i, g := range groups {
		if i > 0 {
			b.WriteString("\n")
		}
		noun := "parameters"
		if len(g.Params) == 1 {
			noun = "parameter"
		}
		fmt.Fprintf(&b, "<details><summary>%s (%d %s)</summary>\n\n", mdEscape(g.Platform), len(g.Params), noun)
		var exps []string
		for _, e := range g.Experiments {
			exps = append(exps, "`"+strings.ReplaceAll(e, "`", "'")+"`")
		}
		fmt.Fprintf(&b, "Experiments: %s.\n\n", strings.Join(exps, ", "))
		b.WriteString("| parameter | value | unit | provenance | accepted | plausible (ASSUME) | description | source |\n")
		b.WriteString("|---|---:|---|---|---|---|---|---|\n")
		sorted := g.Params.Clone()
		slices.SortStableFunc(sorted, func(x, y platforms.Param) int { return strings.Compare(x.Key, y.Key) })
		for _, p := range sorted {
			cells := []string{mdEscape(p.Key), fmtFloat(p.Value), mdEscape(labkit.ShowUnit(p.Unit)), mdEscape(string(p.Prov)),
				acceptedRange(p), plausibleRange(p), mdEscape(p.Doc), mdEscape(p.Source)}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// fmtFloat prints v exactly, in the shortest form that reads back as v,
// thousands separated (labkit.Exact): 1,000,000 rather than 1e+06.
func fmtFloat(v float64) string { return labkit.Exact(v) }

// acceptedRange is "min – max", or the list of choices for a parameter
// that accepts only some values.
func acceptedRange(p platforms.Param) string {
	if len(p.Choices) > 0 {
		return "one of " + platforms.FormatValues(p.Choices) // codes and clocks: 1008, not the list-like 1,008
	}
	return fmtFloat(p.Min) + " – " + fmtFloat(p.Max)
}

// plausibleRange is "low – high" for an ASSUME parameter, empty otherwise.
func plausibleRange(p platforms.Param) string {
	if p.Prov != platforms.ASSUME {
		return ""
	}
	return fmtFloat(p.Low) + " – " + fmtFloat(p.High)
}

// mdEscape makes s safe as one GitHub-flavoured Markdown table cell that
// shows s literally: line breaks become spaces; "|", "\", "*", "`", "~" and
// a "_" that is not between two letters or digits are backslash-escaped
// (GFM never reads an intraword underscore as emphasis, so snake_case stays
// readable); a "<" that could open an HTML tag becomes "&lt;".
func mdEscape(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	rs := []rune(s)
	alnum := func(i int) bool {
		if i < 0 || i >= len(rs) {
			return false
		}
		r := rs[i]
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	var b strings.Builder
	for i, r := range rs {
		switch {
		case strings.ContainsRune("|\\*`~", r):
			b.WriteRune('\\')
		case r == '_' && !(alnum(i-1) && alnum(i+1)):
			b.WriteRune('\\')
		case r == '<' && i+1 < len(rs) && (alnum(i+1) || strings.ContainsRune("/!?", rs[i+1])):
			b.WriteString("&lt;")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// spliceParams replaces what lies between the params markers in doc with
// tables (the markers stay, each on its own line, with a blank line either
// side of the tables). Exactly one begin marker followed by one end marker
// is required.
func spliceParams(doc, tables string) (string, error) {
	if strings.Count(doc, paramsBegin) != 1 || strings.Count(doc, paramsEnd) != 1 {
		return "", fmt.Errorf("want exactly one %s and one %s, found %d and %d",
			paramsBegin, paramsEnd, strings.Count(doc, paramsBegin), strings.Count(doc, paramsEnd))
	}
	i := strings.Index(doc, paramsBegin) + len(paramsBegin)
	j := strings.Index(doc, paramsEnd)
	if j < i {
		return "", errors.New(paramsEnd + " comes before " + paramsBegin)
	}
	return doc[:i] + "\n\n" + tables + "\n" + doc[j:], nil
}

// updateReadme rewrites the parameter tables of the Markdown file at path
// and reports whether its content changed (see rewriteFile).
func updateReadme(path string, groups []labkit.PlatformGroup) (bool, error) {
	return rewriteFile(path, func(doc string) (string, error) { return spliceParams(doc, paramsMarkdown(groups)) })
}

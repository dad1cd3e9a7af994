package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"synclab/labkit"
)

// cmdList prints one line per experiment: name, platform, variants and the
// first sentence of its description, cut to the terminal's width (120
// characters elsewhere; lab run NAME -h has the rest).
func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stdout)
	fs.Usage = func() {
		fmt.Fprintln(stdout, "usage: lab list\nlists the experiments, one line each (lab run NAME -h describes one)")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return extraArgs("list", pos, "lab run NAME -h describes one experiment")
	}
	cat := experiments()
	if len(cat) == 0 {
		fmt.Fprintln(stdout, "no experiments registered")
		return nil
	}
	width := labkit.TerminalWidth(stdout)
	if width <= 0 {
		width = 120 // not a terminal: still one readable line each
	}
	var nameW, platW, varW int
	for _, e := range cat {
		nameW = max(nameW, len(e.Name))
		platW = max(platW, len(e.Platform))
		varW = max(varW, len(variantCount(len(e.Variants))))
	}
	for _, e := range cat {
		line := fmt.Sprintf("%-*s  %-*s  %-*s  %s", nameW, e.Name, platW, e.Platform, varW, variantCount(len(e.Variants)), firstSentence(e.Description))
		fmt.Fprintln(stdout, cut(strings.TrimRight(line, " "), width))
	}
	return nil
}

func variantCount(n int) string {
	if n == 1 {
		return "1 variant"
	}
	return fmt.Sprintf("%d variants", n)
}

// firstSentence is the text of the first line up to the first full stop
// followed by a space that does not end an abbreviation ("e.g. one
// cluster" goes on).
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	for from := 0; ; {
		i := strings.Index(s[from:], ". ")
		if i < 0 {
			return s
		}
		end := from + i + 1
		words := strings.Fields(s[:end])
		if !abbreviations[words[len(words)-1]] {
			return s[:end]
		}
		from = end
	}
}

// abbreviations end with a full stop that does not end a sentence.
var abbreviations = map[string]bool{"e.g.": true, "i.e.": true, "cf.": true, "vs.": true, "etc.": true, "(e.g.": true, "(i.e.": true}

// cut shortens s to width runes with an ellipsis (width <= 0: no limit).
func cut(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:max(width-1, 0)]) + "…"
}

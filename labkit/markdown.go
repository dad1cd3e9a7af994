package labkit

import (
	"html"
	"regexp"
	"strings"
)

// Markdown renders a small, safe subset of Markdown to HTML: ATX headings,
// paragraphs, "-"/"*" and "1." lists, fenced code blocks, and inline code,
// **bold**, *italic* and [links](url). Raw HTML is escaped.
func Markdown(md string) string {
	var b strings.Builder
	var para []string
	list := "" // "ul" or "ol" while inside a list
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
		if list != "" {
			b.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```"):
			flush()
			b.WriteString("<pre><code>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				b.WriteString(html.EscapeString(lines[i]) + "\n")
			}
			b.WriteString("</code></pre>\n")
		case trim == "":
			flush()
		case headingRe.MatchString(trim):
			flush()
			m := headingRe.FindStringSubmatch(trim)
			n := string(rune('0' + len(m[1])))
			b.WriteString("<h" + n + ">" + inline(m[2]) + "</h" + n + ">\n")
		case bulletRe.MatchString(trim), orderedRe.MatchString(trim):
			kind, re := "ul", bulletRe
			if orderedRe.MatchString(trim) {
				kind, re = "ol", orderedRe
			}
			if len(para) > 0 || list != kind {
				flush()
				b.WriteString("<" + kind + ">\n")
				list = kind
			}
			b.WriteString("<li>" + inline(re.ReplaceAllString(trim, "")) + "</li>\n")
		default:
			if list != "" {
				flush()
			}
			para = append(para, trim)
		}
	}
	flush()
	return b.String()
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	bulletRe  = regexp.MustCompile(`^[-*]\s+`)
	orderedRe = regexp.MustCompile(`^\d+\.\s+`)
	codeRe    = regexp.MustCompile("`([^`]+)`")
	boldRe    = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	italicRe  = regexp.MustCompile(`\*([^*]+)\*`)
	linkRe    = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
)

// inline renders the inline markup of raw (unescaped) text and escapes the
// rest; code spans are kept verbatim (escaped, no markup inside), and a link
// to a javascript: URL keeps only its text.
func inline(s string) string {
	var codes []string
	s = codeRe.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+html.EscapeString(m[1:len(m)-1])+"</code>")
		return "\x00"
	})
	s = html.EscapeString(s)
	s = linkRe.ReplaceAllStringFunc(s, func(m string) string {
		p := linkRe.FindStringSubmatch(m)
		if strings.HasPrefix(strings.ToLower(p[2]), "javascript:") {
			return p[1]
		}
		return `<a href="` + p[2] + `">` + p[1] + "</a>"
	})
	s = boldRe.ReplaceAllString(s, "<strong>$1</strong>")
	s = italicRe.ReplaceAllString(s, "<em>$1</em>")
	for _, c := range codes {
		s = strings.Replace(s, "\x00", c, 1)
	}
	return s
}

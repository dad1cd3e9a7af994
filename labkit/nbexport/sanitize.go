package nbexport

import (
	"html"
	"regexp"
	"strings"
)

// Markdown in a notebook is rendered by nbconvert, which passes raw HTML
// through: a <script> or an onerror= in a markdown cell would run in the
// report, which is shared by e-mail and on wikis. sanitizeHTML keeps only
// allow-listed tags and attributes, re-serialised from what it parsed;
// anything else that looks like markup is escaped and shows as text.

// allowedTags are the elements kept, with the attributes each may have
// beyond the global ones.
var allowedTags = map[string][]string{
	"p": nil, "br": nil, "hr": nil, "h1": nil, "h2": nil, "h3": nil, "h4": nil, "h5": nil, "h6": nil,
	"ul": nil, "ol": {"start", "type"}, "li": nil, "dl": nil, "dt": nil, "dd": nil, "blockquote": nil,
	"pre": nil, "code": nil, "kbd": nil, "samp": nil, "var": nil, "em": nil, "strong": nil, "b": nil, "i": nil,
	"u": nil, "s": nil, "del": nil, "ins": nil, "sub": nil, "sup": nil, "small": nil, "mark": nil, "span": nil, "wbr": nil,
	"div": nil, "a": {"href", "name"}, "img": {"src", "alt", "width", "height"},
	"table": nil, "thead": nil, "tbody": nil, "tfoot": nil, "tr": nil, "caption": nil, "colgroup": nil, "col": {"span"},
	"th": {"colspan", "rowspan", "align", "scope"}, "td": {"colspan", "rowspan", "align"},
	"details": nil, "summary": nil, "figure": nil, "figcaption": nil, "abbr": nil, "cite": nil, "q": nil,
}

// globalAttrs may appear on any allowed tag (nbconvert gives headings an id
// and anchor links a class).
var globalAttrs = []string{"id", "class", "title", "lang", "dir"}

var (
	tagAt   = regexp.MustCompile(`^<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>` + "`" + `]+))?)*)\s*(/?)>`)
	attrRE  = regexp.MustCompile(`([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>` + "`" + `]+)))?`)
	comment = regexp.MustCompile(`(?s)^<!--.*?-->`)
	// A URL's scheme, after entities are decoded and control characters
	// and spaces (which browsers ignore in schemes) removed.
	schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)
	dataImg  = regexp.MustCompile(`^data:image/(png|gif|jpeg|webp);`)
)

// sanitizeHTML returns s with only allow-listed tags and attributes.
func sanitizeHTML(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		if m := comment.FindString(s); m != "" {
			s = s[len(m):]
			continue
		}
		m := tagAt.FindStringSubmatch(s)
		if m == nil {
			b.WriteString("&lt;")
			s = s[1:]
			continue
		}
		b.WriteString(cleanTag(m))
		s = s[len(m[0]):]
	}
}

// cleanTag re-serialises an allowed tag with its allowed attributes, or
// escapes the whole tag.
func cleanTag(m []string) string {
	closing, name, attrs, self := m[1] == "/", strings.ToLower(m[2]), m[3], m[4] == "/"
	extra, ok := allowedTags[name]
	if !ok {
		return html.EscapeString(m[0])
	}
	if closing {
		return "</" + name + ">"
	}
	var b strings.Builder
	b.WriteString("<" + name)
	for _, a := range attrRE.FindAllStringSubmatch(attrs, -1) {
		key := strings.ToLower(a[1])
		if !contains(globalAttrs, key) && !contains(extra, key) {
			continue
		}
		val := html.UnescapeString(a[2] + a[3] + a[4])
		if (key == "href" || key == "src") && !safeURL(val, key == "src") {
			continue
		}
		b.WriteString(" " + key + `="` + html.EscapeString(val) + `"`)
	}
	if self {
		b.WriteString(" /")
	}
	return b.String() + ">"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// safeURL accepts relative URLs, http(s) and mailto links and, for images,
// data: URLs of raster images.
func safeURL(u string, image bool) bool {
	clean := strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, u)
	m := schemeRE.FindStringSubmatch(clean)
	if m == nil {
		return true // relative, #anchor, /path
	}
	switch strings.ToLower(m[1]) {
	case "http", "https", "mailto":
		return true
	case "data":
		return image && dataImg.MatchString(strings.ToLower(clean))
	}
	return false
}

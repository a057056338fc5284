package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Link is one link of a document: its target as written and the line it
// is on.
type Link struct {
	Target string
	Line   int
}

var (
	// fence opens or closes a fenced code block.
	fence = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	// codeSpan is an inline code span of one or more backticks.
	codeSpan = regexp.MustCompile("(`+)[^`]*?`+")
	// inlineLink is [text](target) or ![alt](target "title"); the text may
	// hold one level of brackets (a link around code with [ ]).
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^\s()<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDef is a reference definition: [label]: target.
	refDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// heading is an ATX heading.
	heading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	// htmlAnchor is an explicit anchor: id="x" or name="x" in an HTML tag.
	htmlAnchor = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:id|name)="([^"]+)"`)
	// scheme starts an absolute URL (https:, mailto:, …).
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns the document's lines with fenced code blocks blanked:
// what is left is where links and headings are.
func prose(doc string) []string {
	lines := strings.Split(doc, "\n")
	out := make([]string, len(lines))
	inFence := ""
	for i, l := range lines {
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		out[i] = l
	}
	return out
}

// Links returns the links of a Markdown document, in order, outside code.
func Links(doc string) []Link {
	var out []Link
	for i, l := range prose(doc) {
		l = codeSpan.ReplaceAllString(l, "") // a code span's text is no link
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			out = append(out, Link{Target: m[1], Line: i + 1})
		}
		if m := refDef.FindStringSubmatch(l); m != nil {
			out = append(out, Link{Target: m[1], Line: i + 1})
		}
	}
	return out
}

// Anchors returns the fragments that lead into a Markdown document: the
// slug of each heading, as GitHub makes them (a repeated slug gets -1,
// -2, …), and every explicit HTML id or name.
func Anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(doc) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := Slug(m[2])
		if n, dup := seen[s]; dup {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n+1)
		} else {
			seen[s] = 0
		}
		out[s] = true
	}
	return out
}

// linkText keeps a link's text and drops its target: [text](target) reads
// as text in a heading's slug.
var linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug is the anchor GitHub gives a heading: its text, links reduced to
// their text and code spans to theirs, lower-cased, with every character other than a letter, a
// digit, '-', '_' and a space dropped, and spaces made '-'.
func Slug(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Broken returns why each relative link of the Markdown file at path does
// not resolve: a target that is not a file or directory of the
// repository, or a fragment that is no anchor of the Markdown file it
// names. Links with a scheme (https:, mailto:) are not followed.
func Broken(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		d, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		anchors[file] = Anchors(string(d))
		return anchors[file], nil
	}
	var out []string
	for _, l := range Links(string(data)) {
		if scheme.MatchString(l.Target) {
			continue
		}
		file, frag, _ := strings.Cut(l.Target, "#")
		target := path
		if file != "" {
			target = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		if _, err := os.Stat(target); err != nil {
			out = append(out, fmt.Sprintf("%s:%d: %s: no such file", path, l.Line, l.Target))
			continue
		}
		if frag == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		a, err := anchorsOf(target)
		if err != nil {
			return nil, err
		}
		if !a[frag] {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s has no heading or anchor %q", path, l.Line, l.Target, filepath.Base(target), frag))
		}
	}
	return out, nil
}

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinksResolve reads README.md and every page under docs/, and fails
// for each relative link or image whose file is missing, and each #anchor
// that names no heading of its Markdown page. Links to http(s) and mailto
// are left alone: nothing here fetches them.
func TestDocLinksResolve(t *testing.T) {
	pages := []string{filepath.Join(repoRoot, "README.md")}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(text)) {
			links++
			if msg := checkLink(page, l.target); msg != "" {
				rel, _ := filepath.Rel(repoRoot, page)
				t.Errorf("%s:%d: link %q: %s", rel, l.line, l.target, msg)
			}
		}
	}
	if links == 0 {
		t.Fatal("found no links at all: the link parser is broken")
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	// inlineLink is [text](target) and ![alt](target), with an optional
	// title after the target.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// refLink is a reference definition: [name]: target
	refLink = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	// codeSpan is inline code, whose brackets are no links.
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// markdownLinks finds the links of a page outside code blocks and code
// spans.
func markdownLinks(text string) []mdLink {
	var out []mdLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLink{m[1], i + 1})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, mdLink{m[1], i + 1})
		}
	}
	return out
}

// checkLink says what is wrong with a link from page, or "".
func checkLink(page, target string) string {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	file := page
	if path != "" {
		if filepath.IsAbs(path) {
			return "an absolute path: link relative to the page"
		}
		file = filepath.Join(filepath.Dir(page), path)
		if _, err := os.Stat(file); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	for _, a := range headingAnchors(string(text)) {
		if a == anchor {
			return ""
		}
	}
	return "no heading of " + filepath.Base(file) + " has the anchor #" + anchor
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens, a repeated one numbered.
func headingAnchors(text string) []string {
	var out []string
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

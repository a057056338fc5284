// Package docs checks the project's Markdown documentation as a reader
// follows it: every relative link of README.md and docs/*.md leads to a
// file of the repository and, when it names one, to a heading (or an
// explicit anchor) of that file. The parser is small and knows only what
// the documents use: inline links and images, reference definitions,
// fenced code and code spans (whose text is not a link), ATX headings and
// HTML id/name anchors.
package docs

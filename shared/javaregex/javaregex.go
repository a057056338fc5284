// Package javaregex applies the regular expressions Kafka Connect takes
// from configs (topics.regex, RegexRouter, selectors, allowlists) as Java's
// Matcher.matches does: to a whole string. Go's regexp finds a match
// anywhere, so every such pattern is anchored here, once.
package javaregex

import "regexp"

// Whole is expr anchored to match whole strings only.
func Whole(expr string) string { return `^(?:` + expr + `)$` }

// Compile compiles expr to match whole strings only. Go's syntax is a
// subset of Java's: lookarounds and backreferences are refused.
func Compile(expr string) (*regexp.Regexp, error) { return regexp.Compile(Whole(expr)) }

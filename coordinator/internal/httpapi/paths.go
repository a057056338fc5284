package httpapi

// Request paths as Kafka Connect 4.4 takes them. Its web server (Jetty 12)
// refuses some paths before routing, with a 400 and an HTML page; its
// router (Jersey) then matches segments as they are, dot segments included,
// and takes every path with or without one trailing slash. Go's ServeMux
// instead cleans a path (and redirects to the clean one, with an HTML body)
// and matches the slash exactly, so both are done here, before it.

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/sluice-io/sluice/api"
)

// Jetty's reasons for the paths it refuses; Sluice answers them in the
// JSON error body (docs/rest-api.md).
const (
	msgEmptySegment     = "Ambiguous URI empty segment"
	msgAmbiguousSegment = "Ambiguous URI path segment"
	msgAboveRoot        = `HTTP 400 Bad Request: ".." above the root in the path`
)

// canonicalPaths answers the paths Kafka Connect's web server refuses, and
// takes one trailing slash off every other path, so that the rest of the
// API (leader routing included) sees the path Jersey would match.
func canonicalPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, e := canonical(r)
		if e != nil {
			writeError(w, e)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// canonical is r with the path Jersey would match (one trailing slash
// off), or the error of a path Kafka Connect's web server refuses.
func canonical(r *http.Request) (*http.Request, *api.Error) {
	escaped := r.URL.EscapedPath()
	if e := checkPath(escaped); e != nil {
		return nil, e
	}
	if len(escaped) > 1 && strings.HasSuffix(escaped, "/") {
		r = withURL(r, func(u *url.URL) {
			u.Path = strings.TrimSuffix(u.Path, "/")
			u.RawPath = strings.TrimSuffix(u.RawPath, "/")
		})
	}
	return r, nil
}

// checkPath is Jetty's check of an escaped path: no empty segment, no dot
// segment in disguise (%2e), and no ".." above the root.
func checkPath(escaped string) *api.Error {
	if strings.Contains(escaped, "//") {
		return api.Errorf(api.CodeBadRequest, "%s", msgEmptySegment)
	}
	depth := 0
	for _, seg := range strings.Split(strings.TrimPrefix(escaped, "/"), "/") {
		// The URL parsed, so every segment unescapes.
		dec, _ := url.PathUnescape(seg)
		switch {
		case (dec == "." || dec == "..") && dec != seg:
			return api.Errorf(api.CodeBadRequest, "%s", msgAmbiguousSegment)
		case seg == "..":
			if depth--; depth < 0 {
				return api.Errorf(api.CodeBadRequest, "%s", msgAboveRoot)
			}
		case seg == ".", seg == "":
		default:
			depth++
		}
	}
	return nil
}

// dotsAsNames escapes the dot segments of r's path for ServeMux, which
// would otherwise clean them away: for Jersey, "/connectors/." names the
// connector ".", and "/./connectors" is no route.
func dotsAsNames(r *http.Request) *http.Request {
	segs := strings.Split(r.URL.EscapedPath(), "/")
	dots := false
	for i, s := range segs {
		if s == "." || s == ".." {
			segs[i] = strings.Repeat("%2E", len(s))
			dots = true
		}
	}
	if !dots {
		return r
	}
	// Path stays as it is: the new RawPath is another encoding of it, which
	// ServeMux matches on and decodes path values from.
	return withURL(r, func(u *url.URL) { u.RawPath = strings.Join(segs, "/") })
}

// withURL is a shallow copy of r with a changed copy of its URL, as
// http.StripPrefix makes one: a handler must not change the request it got.
func withURL(r *http.Request, change func(*url.URL)) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	change(&u)
	r2.URL = &u
	return r2
}

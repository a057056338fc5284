package console

import (
	"net/http"
	"net/url"
)

// crossSite is why a write must be refused as sent by a page of another
// site, or "" when it may go on. A browser attaches a client certificate,
// or Basic credentials it cached, to any site's request to this server, and
// a page may send a "simple" POST (no custom header, a body without a JSON
// type) with no preflight: the session cookie's CSRF token does not cover
// such callers. So a write is refused when the browser says it comes from
// another site (Sec-Fetch-Site), or its Origin is not this server's. Scripts
// and the CLI send neither header and are not concerned; a request with a
// header of Sluice's own cannot be a simple cross-site request (a page would
// need a preflight, which this server never grants), and a follower's
// forward carries X-Sluice-Forwarded after the follower checked it.
func crossSite(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ""
	}
	for _, h := range []string{"X-Sluice-Forwarded", "X-Sluice-Console", "X-Sluice-Csrf"} {
		if r.Header.Get(h) != "" {
			return ""
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "cross-site", "same-site":
		return "the browser says it was sent by a page of another site (Sec-Fetch-Site: " + site + ")"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
		return "its Origin " + origin + " is not this server's (" + r.Host + ")"
	}
	return ""
}

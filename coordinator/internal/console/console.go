// Package console serves Sluice's web console at /ui/: the page and its
// scripts and styles, embedded in the binary, and the sign-in session
// endpoints (docs/console.md). Every action the console takes goes
// through the REST API, with the caller's session, so the same roles,
// connector patterns and audit trail apply as to any other client.
package console

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
)

//go:embed web
var files embed.FS

// Prefix is where the console is served.
const Prefix = "/ui/"

// contentSecurityPolicy lets the page load only its own files: no inline
// script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configures the console.
type Options struct {
	// Sessions signs callers in (nil: REST authentication is off, and the
	// console needs no sign-in).
	Sessions Sessions
	// Logger gets a line per sign-in and sign-out.
	Logger *slog.Logger
}

// Mount serves the console at /ui/ and everything else with api.
func Mount(api http.Handler, o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	web, _ := fs.Sub(files, "web") // the directory is embedded
	c := &console{o: o, web: web, files: http.FileServerFS(web)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := crossSite(r); why != "" {
			o.Logger.Warn("refused a write from another site", "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "why", why)
			writeError(w, http.StatusForbidden, "Refused a "+r.Method+" of "+r.URL.Path+": "+why+". Writes are taken from the console and from clients that are not browsers")
			return
		}
		switch {
		case r.URL.Path == "/ui":
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, Prefix):
			c.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

type console struct {
	o     Options
	web   fs.FS
	files http.Handler
}

// ServeHTTP serves /ui/session, the embedded files, and for any other
// path under /ui/ the page itself: its script routes deep links.
func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	rest := strings.TrimPrefix(r.URL.Path, Prefix)
	if rest == "session" {
		c.session(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "The console's files are read with GET")
		return
	}
	if rest != "" && path.Ext(rest) != "" {
		if _, err := fs.Stat(c.web, rest); err == nil {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + rest
			c.files.ServeHTTP(w, r2)
			return
		}
		// A missing script or style is a 404; a page's path may hold a
		// dot anywhere else (a connector orders.v2, a rollout id
		// 20261202-021500.123-…), and is the page.
		if c.isAssetDir(rest) {
			writeError(w, http.StatusNotFound, "The console has no file "+rest)
			return
		}
	}
	// A page of the console (/ui/, /ui/connectors/x, …): the same
	// document, whose script shows what the path names.
	page, _ := fs.ReadFile(c.web, "index.html") // embedded
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(page) // a broken connection is the browser's
	}
}

// isAssetDir reports whether rest (a path under /ui/) is in one of the
// directories of the embedded files (css/, js/, img/): no page lives there.
func (c *console) isAssetDir(rest string) bool {
	dir, _, ok := strings.Cut(rest, "/")
	if !ok {
		return false
	}
	st, err := fs.Stat(c.web, dir)
	return err == nil && st.IsDir()
}

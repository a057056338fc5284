// Package info is `sluice info`: what the server at --url is, from GET /.
package info

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/shared/version"
)

// Command is `sluice info`.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "show the server at --url: the Kafka Connect version it reports, its commit and Kafka cluster id, Sluice's own version if it says, its health, and this CLI's version",
		Flags: session.Flags(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return session.Usage("info takes no arguments")
			}
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			ans, err := s.API.Raw(s.Ctx(), http.MethodGet, "/", nil)
			if err != nil {
				return s.Err(err)
			}
			var doc map[string]any
			if err := session.DecodeNumbers(ans.Body, &doc); err != nil {
				return fmt.Errorf("GET / answered what is not a JSON object: %w", err)
			}
			health := healthOf(s)
			out := serverInfo(s.API.Address(), doc, ans.Header)
			out["health"] = health
			return s.Print(out, func() *output.Rows { return rows(s.API.Address(), doc, ans.Header, health) })
		},
	}
}

// healthOf is GET /health in a few words: its status and, from a Sluice,
// the coordinator's role ("healthy (leader)"); or why it could not be
// read. A server that is starting answers 503 with its health document,
// which says so.
func healthOf(s *session.Session) string {
	h, err := s.API.Admin().Health(s.Ctx())
	if h.Status == "" && err != nil {
		return "unavailable (" + s.Err(err).Error() + ")"
	}
	text := h.Status
	if h.Role != "" {
		text += " (" + h.Role + ")"
	}
	if h.Status != "healthy" && h.Message != "" {
		text += ": " + h.Message
	}
	return text
}

// sluiceHeader is the prefix of the headers by which Sluice adds to an
// answer of Kafka Connect's without changing its body.
const sluiceHeader = "X-Sluice-"

// serverInfo is what -o json|yaml prints: GET /'s document as the server
// sent it, where it was asked, Sluice's headers, and this CLI's version.
func serverInfo(url string, doc map[string]any, h http.Header) map[string]any {
	out := map[string]any{"url": url, "server": doc, "cli_version": version.Version, "cli_commit": version.Commit}
	if hs := sluiceHeaders(h); len(hs) > 0 {
		out["headers"] = hs
	}
	return out
}

// sluiceHeaders are the answer's X-Sluice-* headers, each with its
// values joined.
func sluiceHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), sluiceHeader) {
			out[http.CanonicalHeaderKey(k)] = strings.Join(v, ", ")
		}
	}
	return out
}

// known are GET /'s fields in Kafka Connect, in the order shown, with
// their labels.
var known = []struct{ key, label string }{
	{"version", "version:"},
	{"commit", "commit:"},
	{"kafka_cluster_id", "kafka cluster id:"},
}

// rows shows the server for people: Kafka Connect's fields first, then any
// field or X-Sluice-* header the server adds (Sluice's own version, say),
// its health, then this CLI's version. A field the server leaves out is
// shown as "-".
func rows(url string, doc map[string]any, h http.Header, health string) *output.Rows {
	t := output.NewRows()
	t.Add("url:", url)
	for _, k := range known {
		t.Add(k.label, text(doc[k.key]))
	}
	var extra []string
	for k := range doc {
		if !slices.ContainsFunc(known, func(f struct{ key, label string }) bool { return f.key == k }) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		t.Add(k+":", text(doc[k]))
	}
	hs := sluiceHeaders(h)
	names := make([]string, 0, len(hs))
	for k := range hs {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		t.Add(k+":", hs[k])
	}
	t.Add("health:", health)
	t.Add("cli version:", version.Version+" ("+version.Commit+")")
	return t
}

// text is a field's value as a cell: a string as it is, anything else as
// its compact JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

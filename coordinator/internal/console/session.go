package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/auth"
	"github.com/sluice-io/sluice/coordinator/internal/session"
)

// Sessions is what the console needs to sign callers in and out: the
// REST API's authenticator and the session signer.
type Sessions struct {
	Authenticator *auth.Authenticator
	Manager       *session.Manager
}

// on reports whether sign-in is needed.
func (s Sessions) on() bool { return s.Authenticator != nil && s.Manager != nil }

// sessionInfo is GET /ui/session's answer, and POST's.
type sessionInfo struct {
	// Auth says whether the REST API asks for credentials: false, the
	// console needs no sign-in and every action is open.
	Auth     bool       `json:"auth"`
	SignedIn bool       `json:"signed_in"`
	Reason   string     `json:"reason,omitempty"`
	User     *userInfo  `json:"principal,omitempty"`
	Expires  *time.Time `json:"expires,omitempty"`
	CSRF     string     `json:"csrf,omitempty"`
}

type userInfo struct {
	Name   string      `json:"name"`
	Kind   string      `json:"kind"`
	Via    string      `json:"via"`
	Grants []grantInfo `json:"grants"`
}

type grantInfo struct {
	Role       string   `json:"role"`
	Connectors []string `json:"connectors,omitempty"`
	Tenants    []string `json:"tenants,omitempty"`
}

func infoOf(s *session.Session) sessionInfo {
	p := s.Principal
	u := &userInfo{Name: p.Name, Kind: p.Kind(), Via: p.Via, Grants: []grantInfo{}}
	for _, g := range p.Grants {
		u.Grants = append(u.Grants, grantInfo{Role: g.Role.String(), Connectors: g.Connectors, Tenants: g.Tenants})
	}
	exp := s.Expires.UTC()
	return sessionInfo{Auth: true, SignedIn: true, User: u, Expires: &exp, CSRF: s.CSRF}
}

// signIn is POST /ui/session's body: a user and password, or a token (a
// bearer token of the auth file or a JWT).
type signIn struct {
	User     string `json:"user"`
	Password string `json:"password"`
	Token    string `json:"token"`
}

// session serves /ui/session: GET tells who is signed in, POST signs in,
// DELETE signs out.
func (c *console) session(w http.ResponseWriter, r *http.Request) {
	s := c.o.Sessions
	switch r.Method {
	case http.MethodGet:
		if !s.on() {
			writeJSON(w, http.StatusOK, sessionInfo{})
			return
		}
		cur, err := s.Manager.Read(r)
		if errors.Is(err, session.ErrNoSession) {
			if info, ok := c.byCertificate(r); ok {
				writeJSON(w, http.StatusOK, info)
				return
			}
		}
		if err != nil {
			info := sessionInfo{Auth: true}
			if !errors.Is(err, session.ErrNoSession) {
				info.Reason = err.Error()
			}
			writeJSON(w, http.StatusOK, info)
			return
		}
		writeJSON(w, http.StatusOK, infoOf(cur))
	case http.MethodPost:
		c.signIn(w, r)
	case http.MethodDelete:
		if s.on() {
			if cur, err := s.Manager.Read(r); err == nil {
				if err := cur.CheckCSRF(r); err != nil {
					writeError(w, http.StatusForbidden, err.Error())
					return
				}
				c.o.Logger.Info("console sign-out", "principal", cur.Principal.Kind(), "remote", r.RemoteAddr)
			}
			s.Manager.Clear(w, r)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, "The session is read with GET, opened with POST and closed with DELETE")
	}
}

// byCertificate is the session info of a caller known by its verified
// client certificate: the browser presents it with every request, so such
// a caller needs no session (and no CSRF token: the API refuses writes
// other sites' pages send, console.crossSite).
func (c *console) byCertificate(r *http.Request) (sessionInfo, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return sessionInfo{}, false
	}
	bare := r.Clone(r.Context())
	bare.Header = http.Header{}
	p, err := c.o.Sessions.Authenticator.Authenticate(bare, r.TLS)
	if err != nil {
		return sessionInfo{}, false
	}
	info := infoOf(&session.Session{Principal: p})
	info.Expires = nil
	return info, true
}

// signIn checks the credentials of POST /ui/session as the REST API would
// check them on a request, and opens a session for their principal.
func (c *console) signIn(w http.ResponseWriter, r *http.Request) {
	s := c.o.Sessions
	if !s.on() {
		writeError(w, http.StatusConflict, "REST authentication is off: the console needs no sign-in")
		return
	}
	// A JSON body cannot be sent by another site's form without a
	// preflight this server never grants: no sign-in from elsewhere.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "Sign in with a JSON body: {\"user\", \"password\"} or {\"token\"}")
		return
	}
	var in signIn
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("The sign-in body does not parse: %v", err))
		return
	}
	creds := r.Clone(r.Context())
	creds.Header = http.Header{}
	switch {
	case in.Token != "" && in.User == "" && in.Password == "":
		creds.Header.Set("Authorization", "Bearer "+strings.TrimSpace(in.Token))
	case in.User != "" && in.Token == "":
		creds.SetBasicAuth(in.User, in.Password)
	default:
		writeError(w, http.StatusBadRequest, "Give a user and password, or a token, to sign in")
		return
	}
	p, err := s.Authenticator.Authenticate(creds, nil)
	if err != nil {
		c.o.Logger.Info("console sign-in refused", "remote", r.RemoteAddr, "reason", err.Error())
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	cur, err := s.Manager.Issue(w, r, p)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c.o.Logger.Info("console sign-in", "principal", p.Kind(), "remote", r.RemoteAddr, "expires", cur.Expires.UTC())
	writeJSON(w, http.StatusOK, infoOf(cur))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a broken connection is the client's
}

// writeError answers as the REST API does: {"error_code", "message"}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error_code": status, "message": msg})
}

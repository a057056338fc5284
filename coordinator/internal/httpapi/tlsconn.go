package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// msgPlainToTLS answers a plain HTTP request that reached the HTTPS port:
// its credentials, if any, crossed the network in clear, and are not used.
const msgPlainToTLS = "This server takes HTTPS only: the request was sent over plain HTTP, which is refused (credentials must not cross the network in clear). Use an https:// URL."

// ServeTLS serves HTTPS with cfg on connections accepted from ln, until
// Shutdown or Close. The TLS handshake runs under the connection, beneath
// the rewriting of net/http's own answers into JSON (jsonErrorsConn sees
// plain text either way); a request sent in plain HTTP is answered a JSON
// 400 saying HTTPS is required.
func (s *Server) ServeTLS(ln net.Listener, cfg *tls.Config) error {
	s.srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if jc, ok := c.(*jsonErrorsConn); ok {
			if tc, ok := jc.Conn.(*tlsConn); ok {
				return context.WithValue(ctx, tlsConnKey{}, tc.Conn)
			}
		}
		return ctx
	}
	s.srv.Handler = withTLSState(s.srv.Handler)
	return s.Serve(tlsListener{Listener: ln, cfg: cfg})
}

// withTLSState sets each request's TLS field, which net/http fills only
// for a connection that is itself a *tls.Conn: the handlers (a Location's
// scheme, client certificates) see the connection's state as usual.
func withTLSState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(tlsConnKey{}).(*tls.Conn); ok && r.TLS == nil {
			cs := c.ConnectionState()
			r = r.WithContext(r.Context()) // a copy, whose TLS is ours to set
			r.TLS = &cs
		}
		next.ServeHTTP(w, r)
	})
}

// tlsListener hands out server-side TLS connections.
type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

// Accept implements net.Listener; the handshake is left to the first Read,
// so that a slow client does not hold up Accept.
func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tlsConn{Conn: tls.Server(c, l.cfg)}, nil
}

// tlsConn is a server TLS connection that answers a plain HTTP request
// (what a client sends to an https port with an http:// URL) itself.
type tlsConn struct {
	*tls.Conn
	once sync.Once
}

// Read implements net.Conn.
func (c *tlsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	var re tls.RecordHeaderError
	if err != nil && errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader[:]) {
		c.once.Do(func() {
			_, body := errorReply(badRequest(msgPlainToTLS))
			data, _ := marshalJSON(body) // ErrorBody always marshals
			_, _ = fmt.Fprintf(re.Conn, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(data), data)
		})
	}
	return n, err
}

// looksLikeHTTP reports whether a TLS record header (the first 5 bytes of
// a connection) is the start of an HTTP request line instead.
func looksLikeHTTP(hdr []byte) bool {
	switch string(hdr) {
	case "GET /", "HEAD ", "POST ", "PUT /", "PATCH", "DELET", "OPTIO":
		return true
	}
	return false
}

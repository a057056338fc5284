package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// RawResponse is a 2xx answer as the server sent it.
type RawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// Raw sends a request the typed groups do not shape: an endpoint newer
// than this client, or a caller that shows the server's answer byte for
// byte (a CLI printing the JSON as sent). path is the escaped path and
// query ("/connectors?expand=status"); body, when not nil, is sent as
// JSON: a []byte or json.RawMessage byte for byte, any other value
// encoded.
//
// Errors, retries and the context are as for the typed calls: a non-2xx
// answer is an *Error (or an UnsupportedError), and an unknown outcome is
// sent again only for GET and HEAD.
func (c *Client) Raw(ctx context.Context, method, path string, body any) (RawResponse, error) {
	if b, ok := body.([]byte); ok {
		body = json.RawMessage(b)
	}
	cl := call{method: method, path: path, body: body, safe: method == http.MethodGet || method == http.MethodHead}
	if !strings.HasPrefix(path, "/") {
		cl.path = "/" + path
	}
	ans, err := c.do(ctx, cl, nil)
	if err != nil {
		return RawResponse{}, err
	}
	return RawResponse{Status: ans.status, Header: ans.header, Body: ans.body}, nil
}

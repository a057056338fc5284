package httpapi

// net/http answers a request it cannot read (a malformed request line,
// URI or header, headers over MaxHeaderBytes, an unknown transfer coding)
// before any handler runs, in one write on the connection, and closes it:
//
//	HTTP/1.1 <status>[: <detail>]\r\n
//	Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n
//	<text>
//
// and an Expect other than 100-continue with a bodiless 417. Handlers of
// this package never answer text/plain, nor 417, so such a write can only
// be net/http's own; rewriteServerError turns it into the JSON error body
// every Kafka Connect client parses.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/textcut"
)

const (
	plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	statusLinePrefix  = "HTTP/1.1 "
	expectationFailed = "HTTP/1.1 417 "
	// maxDetail bounds the part of a refused request an answer quotes.
	maxDetail = 200
)

// headersEnd reports whether head holds a request's whole header block.
func headersEnd(head []byte) bool {
	return bytes.Contains(head, []byte("\r\n\r\n")) || bytes.Contains(head, []byte("\n\n"))
}

// rewriteServerError returns the JSON answer that replaces p, a write on a
// server connection, when p is one of net/http's own answers (see above);
// nil otherwise. head is the refused request's head, as far as it was read.
func rewriteServerError(p, head []byte, l Limits) []byte {
	if e := serverError(p, head, l); e != nil {
		status, body := errorReply(e)
		data, _ := marshalJSON(body) // ErrorBody always marshals
		return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			status, http.StatusText(status), len(data), data)
	}
	return nil
}

// serverError is the error net/http's answer p stands for, or nil when p
// is not one of its own answers.
func serverError(p, head []byte, l Limits) *api.Error {
	if bytes.HasPrefix(p, []byte(expectationFailed)) && bytes.HasSuffix(p, []byte("\r\n\r\n")) {
		return &api.Error{Code: api.Code(http.StatusExpectationFailed),
			Message: "HTTP 417 Expectation Failed: only 100-continue is supported"}
	}
	i := bytes.Index(p, []byte(plainErrorHeaders))
	if !bytes.HasPrefix(p, []byte(statusLinePrefix)) || i < 0 {
		return nil
	}
	statusLine := string(p[len(statusLinePrefix):i])
	text := string(p[i+len(plainErrorHeaders):])
	code, err := strconv.Atoi(strings.SplitN(statusLine, " ", 2)[0])
	if err != nil || code < 400 || code > 599 {
		return nil
	}
	if code == http.StatusRequestHeaderFieldsTooLarge {
		return &api.Error{Code: api.Code(code), Message: fmt.Sprintf("Request headers too large (limit %s)", sizeText(l.MaxHeaderBytes))}
	}
	// The detail: net/http's own when it gives one, else what reading the
	// request again says.
	var detail string
	if _, d, ok := strings.Cut(statusLine, ": "); ok {
		detail = d
	} else if text != statusLine {
		detail = text
	} else if code == http.StatusBadRequest {
		detail = readError(head)
	}
	msg := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	if cut := textcut.Prefix(detail, maxDetail); cut != detail {
		detail = cut + "…"
	}
	if detail != "" {
		msg += ": " + detail
	}
	return &api.Error{Code: api.Code(code), Message: msg}
}

// readError is why net/http refused the request whose head is given, as
// reading it again reports; "" when the head was not all kept (a part
// would read as another error) or reads without one.
func readError(head []byte) string {
	if !headersEnd(head) {
		return ""
	}
	_, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	var ue *url.Error
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ""
	case errors.As(err, &ue):
		return ue.Err.Error()
	default:
		return err.Error()
	}
}

// sizeText writes a byte count as the limits are documented: 8 MiB, 64 KiB.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

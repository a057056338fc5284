package api

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable error code. It equals the HTTP status the REST API
// answers with, so a code maps to a status without a table.
type Code int

// The codes Sluice uses.
const (
	CodeBadRequest Code = http.StatusBadRequest
	// CodeForbidden answers a request its sender may not make: an agent
	// speaking for another, a command the leader did not sign.
	CodeForbidden       Code = http.StatusForbidden
	CodeNotFound        Code = http.StatusNotFound
	CodeMethodNotAllow  Code = http.StatusMethodNotAllowed
	CodeConflict        Code = http.StatusConflict
	CodeTooLarge        Code = http.StatusRequestEntityTooLarge
	CodeUnsupportedType Code = http.StatusUnsupportedMediaType
	// CodeUpgradeRequired answers a peer that speaks an older protocol.
	CodeUpgradeRequired Code = http.StatusUpgradeRequired
	CodeInternal        Code = http.StatusInternalServerError
	CodeUnavailable     Code = http.StatusServiceUnavailable
	CodeTimeout         Code = http.StatusGatewayTimeout
)

// Error is the one error type that crosses a process boundary: over REST as
// {"error_code","message"}, over NATS as the service error headers. Match on
// Code, never on Message.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Errorf makes an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError finds an *Error in err's chain. Any other error becomes a 500
// carrying err's text, which is what Kafka Connect does with an exception it
// has no mapping for.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// IsCode reports whether err carries code.
func IsCode(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

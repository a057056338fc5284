package session

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
)

// Call0 runs one call of the typed client with the session's context,
// its error in the CLI's words (Err).
func Call0[T any](s *Session, call func(context.Context) (T, error)) (T, error) {
	v, err := call(s.Ctx())
	return v, s.Err(err)
}

// Call is Call0 for a call of one argument: Call(s, s.API.Connectors().Get, name).
func Call[A, T any](s *Session, call func(context.Context, A) (T, error), a A) (T, error) {
	v, err := call(s.Ctx(), a)
	return v, s.Err(err)
}

// Call2 is Call0 for a call of two arguments.
func Call2[A, B, T any](s *Session, call func(context.Context, A, B) (T, error), a A, b B) (T, error) {
	v, err := call(s.Ctx(), a, b)
	return v, s.Err(err)
}

// Exec is Call for a call that answers nothing.
func Exec[A any](s *Session, call func(context.Context, A) error, a A) error {
	return s.Err(call(s.Ctx(), a))
}

// PrintAnswer prints a call's answer, the REST document itself (its
// fields as the client's type has them) rather than a command's rows: JSON
// or YAML, or a table of its keys and values (output.Generic). The
// REST-mirroring aliases print this.
func (s *Session) PrintAnswer(v any) error {
	return s.Print(v, func() *output.Rows { return output.Generic(v) })
}

// DecodeNumbers decodes JSON into v keeping its numbers as json.Number:
// an offset may not fit a float64.
func DecodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

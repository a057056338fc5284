// Package session is what every command that calls the REST API shares:
// the connection flags and their resolution (flags, SLUICE_* variables,
// contexts, credentials), the client built from them, -o, and the helpers
// that send a request and print its answer in the format asked for
// (package output renders them).
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/suggest"
)

// UsageError is a wrong command line: main exits with code 2 for it.
type UsageError struct{ Err error }

// Error is the wrapped error's message.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap is the wrapped error.
func (e UsageError) Unwrap() error { return e.Err }

// Usage is a UsageError saying what is wrong, fmt.Errorf style.
func Usage(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// Session is one client command's connection and output settings.
type Session struct {
	// C is the command's context: its flags, arguments and writers.
	C *cli.Context
	// API is the typed client of the REST API. Call it through Call,
	// Call2, Call0 or Exec, which give it the session's context and put
	// its errors in the CLI's words.
	API *api.Client
	// Format is -o's.
	Format output.Format
	// W is where results go (the app's stdout).
	W io.Writer
	// reason is --reason, sent with each request (api.WithReason).
	reason string
	// Answer is set when the command runs as a REST-mirroring alias
	// (sluice connectors …): it prints the server's answer rather than
	// its own rows (AsAnswer).
	Answer bool
	// connectors are the server's connector names once read for a "did
	// you mean" (nil: not read yet).
	connectors []string
}

// answerKey marks, in a command's context, a run of the REST-mirroring
// spelling (AsAnswer).
type answerKey struct{}

// AsAnswer makes cmd run as a REST-mirroring alias: its session's Answer
// is set, so it prints the server's answer (PrintAnswer). It returns cmd.
func AsAnswer(cmd *cli.Command) *cli.Command {
	act := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		c.Context = context.WithValue(c.Context, answerKey{}, true)
		return act(c)
	}
	return cmd
}

// Open resolves a client command's settings: the connection (flags, their
// variables, the context), -o, and --timeout, which from now on bounds
// the command's context (c.Context). A --url corrected (BaseURL) is said
// on stderr.
func Open(c *cli.Context) (*Session, error) {
	d, _ := overall(c)
	return open(c, d, limits{connect: c.Duration("connect-timeout"), retry: &cliRetry})
}

// Completion limits: a shell waits for the names it completes, and a
// server that does not answer at once should cost a keystroke a moment,
// not --timeout.
const (
	completionTimeout        = 3 * time.Second
	completionConnectTimeout = time.Second
)

// OpenCompletion is Open for a shell's completion of names, with short
// timeouts of its own whatever the flags say, and no second try.
func OpenCompletion(c *cli.Context) (*Session, error) {
	return open(c, completionTimeout, limits{connect: completionConnectTimeout, retry: &api.NoRetry})
}

// open is Open with the command's timeout (0: none) and the client's
// limits (lim.request is set here: a command without a timeout bounds each
// request).
func open(c *cli.Context, timeout time.Duration, lim limits) (*Session, error) {
	format, err := output.Parse(c.String("output"))
	if err != nil {
		return nil, UsageError{err}
	}
	cn, err := ResolveConn(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(c.Context)
	if timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, timeout)
		end := cancel
		cancel = func(cause error) { end(cause); stop() }
	}
	if timeout <= 0 {
		lim.request = DefaultTimeout // no --timeout: a request alone is bounded
	}
	rc, note, err := clientFor("--url", cn, lim, cancel)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	c.Context = ctx
	s := &Session{C: c, API: rc, Format: format, W: c.App.Writer}
	s.Answer = c.Context.Value(answerKey{}) == true
	if note != "" {
		s.Progress("note: %s", note)
	}
	return s, nil
}

// overall is the command's --timeout when it is the connection flags'
// (TimeoutFlag), and whether it is: the --timeout nearest the command
// decides, as urfave/cli reads the nearest.
func overall(c *cli.Context) (time.Duration, bool) {
	for _, cc := range c.Lineage() {
		if cc.Command == nil {
			continue
		}
		for _, f := range cc.Command.Flags {
			if slices.Contains(f.Names(), "timeout") {
				if _, ok := f.(overallTimeout); !ok {
					return 0, false
				}
				return c.Duration("timeout"), true
			}
		}
	}
	return 0, false
}

// suggestConnector is "; did you mean X?" for a connector name the server
// does not have, from its list (read once); empty when none is close or
// the list cannot be read.
func (s *Session) suggestConnector(name string) string {
	if !s.readConnectors() {
		return ""
	}
	return suggest.DidYouMean(name, s.connectors)
}

// readConnectors reads the server's connector names into s.connectors,
// once; it reports whether they could be read.
func (s *Session) readConnectors() bool {
	if s.connectors != nil {
		return true
	}
	names, err := s.API.Connectors().List(s.Ctx())
	if err != nil {
		return false
	}
	if names == nil {
		names = []string{} // read, and empty
	}
	s.connectors = names
	return true
}

// ReasonFlag is --reason, on every command that changes offsets.
func ReasonFlag() cli.Flag {
	return &cli.StringFlag{Name: "reason", Usage: "why: kept in the offsets history entry of the change (the X-Sluice-Reason header)"}
}

// OpenWithReason is Open with --reason on the requests.
func OpenWithReason(c *cli.Context) (*Session, error) {
	s, err := Open(c)
	if err != nil {
		return nil, err
	}
	if r := c.String("reason"); r != "" {
		// A header is one line: a reason of several would fail in the
		// HTTP client with a message about headers, not about --reason.
		if strings.ContainsAny(r, "\r\n") {
			return nil, UsageError{errors.New("--reason must be one line")}
		}
		s.reason = r
	}
	return s, nil
}

// TableUnlessAsked makes the session print tables when neither -o nor
// SLUICE_OUTPUT chose a format (in a group whose -o defaults to json).
func (s *Session) TableUnlessAsked() {
	if !s.C.IsSet("output") {
		s.Format = output.Table
	}
}

// Ctx is the context of the session's requests: the command's, with
// --reason when one was given.
func (s *Session) Ctx() context.Context {
	if s.reason != "" {
		return api.WithReason(s.C.Context, s.reason)
	}
	return s.C.Context
}

// Print writes v in the session's format; table renders it as a table.
func (s *Session) Print(v any, table func() *output.Rows) error {
	return output.Write(s.W, s.Format, v, table)
}

// Progress writes one line of progress to stderr.
func (s *Session) Progress(format string, args ...any) {
	fmt.Fprintf(s.C.App.ErrWriter, format+"\n", args...)
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/restclient"
)

// session is one client command's connection and output settings.
type session struct {
	c      *cli.Context
	api    *restclient.Client
	format output.Format
	w      io.Writer
}

// open resolves a client command's settings: the connection (flags, their
// variables, the context) and -o.
func open(c *cli.Context) (*session, error) {
	format, err := output.Parse(c.String("output"))
	if err != nil {
		return nil, usageError{err}
	}
	rc, err := newClient(c)
	if err != nil {
		return nil, err
	}
	return &session{c: c, api: rc, format: format, w: c.App.Writer}, nil
}

// do sends one request.
func (s *session) do(method, path string, body []byte) ([]byte, int, error) {
	return s.api.Do(s.c.Context, method, path, body)
}

// get sends a GET and decodes its JSON answer into v.
func (s *session) get(path string, v any) error { return s.api.Get(s.c.Context, path, v) }

// print writes v in the session's format; table renders it as a table.
func (s *session) print(v any, table func() *output.Rows) error {
	return output.Write(s.w, s.format, v, table)
}

// connectorPath is /connectors/<name><suffix>, the name escaped.
func connectorPath(name, suffix string) string { return "/connectors/" + url.PathEscape(name) + suffix }

// call sends one REST request and prints the answer's body as the server
// sent it (as JSON or YAML, or in a generic table), or its status line
// when it has none.
func call(c *cli.Context, method, path string, body []byte) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	return s.call(method, path, body)
}

// call is the package's call in this session.
func (s *session) call(method, path string, body []byte) error {
	data, status, err := s.do(method, path, body)
	if err != nil {
		return err
	}
	return s.render(data, status)
}

// callBusy is call with a spinner on stderr while the request runs, for
// the requests that take a while (offsets operations fence and write).
func (s *session) callBusy(what, method, path string, body []byte) error {
	data, status, err := s.doBusy(what, method, path, body)
	if err != nil {
		return err
	}
	return s.render(data, status)
}

// doBusy is do with a spinner on stderr while the request runs.
func (s *session) doBusy(what, method, path string, body []byte) (data []byte, status int, err error) {
	err = busy(what, func() error {
		data, status, err = s.do(method, path, body)
		return err
	})
	return data, status, err
}

// render prints an answer's body as the server sent it, in the session's
// format, or its status line when it has none.
func (s *session) render(data []byte, status int) error {
	if len(data) == 0 {
		fmt.Fprintln(s.w, status, http.StatusText(status))
		return nil
	}
	// Numbers stay as the server wrote them (an offset may not fit a
	// float64).
	var v any
	if err := decodeNumbers(data, &v); err != nil {
		_, err = s.w.Write(append(data, '\n'))
		return err
	}
	return s.print(v, func() *output.Rows { return genericRows(v) })
}

// decodeNumbers decodes JSON into v keeping its numbers as json.Number:
// an offset may not fit a float64.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// genericRows shows any JSON value as a table: an object's keys and
// values, or an array's elements; nested values stay compact JSON.
func genericRows(v any) *output.Rows {
	switch v := v.(type) {
	case map[string]any:
		rows := output.NewRows("KEY", "VALUE")
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			rows.Add(k, compact(v[k]))
		}
		return rows
	case []any:
		rows := output.NewRows("VALUE")
		for _, e := range v {
			rows.Add(compact(e))
		}
		return rows
	}
	return output.NewRows().Add(compact(v))
}

// compact is a JSON value on one line; a string is itself.
func compact(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// readBody reads a JSON document from a file, or stdin for "-".
func readBody(path string) ([]byte, error) {
	data, err := readFileOrStdin(path)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s is not valid JSON", path)
	}
	return data, nil
}

// readFileOrStdin reads a file, or stdin for "-".
func readFileOrStdin(path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// nameArg returns the one connector name argument.
func nameArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usageError{fmt.Errorf("give exactly one connector name")}
	}
	return c.Args().First(), nil
}

// simple makes a command that sends method to /connectors/<name><suffix>.
func simple(name, usage, method, suffix string) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			n, err := nameArg(c)
			if err != nil {
				return err
			}
			return call(c, method, connectorPath(n, suffix), nil)
		},
	}
}

// fileFlag is -f: a JSON file, or - for stdin.
func fileFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "file", Aliases: []string{"f"}, Required: true, Usage: "JSON file, or - for stdin"}
}

// connectorsCommand is the REST API's connector endpoints one to one,
// printing the server's answers (JSON by default, as since the first
// release; -o changes it).
func connectorsCommand() *cli.Command {
	return &cli.Command{
		Name:  "connectors",
		Usage: "manage connectors through the REST API, printing its answers (JSON by default)",
		Flags: clientFlagsOutput("json"),
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list connectors with their status", Action: func(c *cli.Context) error {
				return call(c, http.MethodGet, "/connectors?expand=status", nil)
			}},
			{
				Name: "create", Usage: "create a connector from a JSON file (name, config, initial_state, initial_offsets)",
				Flags: append([]cli.Flag{fileFlag()}, waitFlags()...),
				Action: func(c *cli.Context) error {
					body, err := readBody(c.String("file"))
					if err != nil {
						return err
					}
					s, err := open(c)
					if err != nil {
						return err
					}
					if err := s.call(http.MethodPost, "/connectors", body); err != nil || !c.Bool("wait") {
						return err
					}
					var req struct {
						Name string `json:"name"`
					}
					if err := json.Unmarshal(body, &req); err != nil {
						return fmt.Errorf("read the connector's name: %w", err)
					}
					return s.waitRunning([]string{req.Name}, c.Duration("timeout"))
				},
			},
			simple("get", "show a connector", http.MethodGet, ""),
			simple("status", "show a connector's status", http.MethodGet, "/status"),
			simple("tasks", "show a connector's tasks", http.MethodGet, "/tasks"),
			simple("stop", "stop a connector", http.MethodPut, "/stop"),
			simple("pause", "pause a connector", http.MethodPut, "/pause"),
			simple("resume", "resume a connector", http.MethodPut, "/resume"),
			simple("restart", "restart a connector and all its tasks", http.MethodPost, "/restart?includeTasks=true"),
			{
				Name: "delete", Usage: "delete a connector", ArgsUsage: "NAME",
				Flags: []cli.Flag{resetOffsetsFlag()},
				Action: func(c *cli.Context) error {
					n, err := nameArg(c)
					if err != nil {
						return err
					}
					q := ""
					if c.Bool("reset-offsets") {
						q = "?reset_offsets=true"
					}
					return call(c, http.MethodDelete, connectorPath(n, q), nil)
				},
			},
		},
	}
}

// resetOffsetsFlag is delete's --reset-offsets.
func resetOffsetsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "reset-offsets", Usage: "reset its offsets too"}
}

// offsetsCommand is the REST API's offsets endpoints, printing the
// server's answers (JSON by default).
func offsetsCommand() *cli.Command {
	return &cli.Command{
		Name:  "offsets",
		Usage: "read and change connector offsets: Kafka Connect's endpoints (JSON by default), dry runs, resets by rule, the offsets history, undo and restore",
		Flags: clientFlagsOutput("json"),
		Subcommands: []*cli.Command{
			simple("get", "show a connector's offsets", http.MethodGet, "/offsets"),
			offsetsExportCommand(), offsetsImportCommand(),
			offsetsResetCommand(), offsetsAlterCommand(),
			offsetsHistoryCommand(), offsetsUndoCommand(), offsetsRestoreCommand(),
		},
	}
}

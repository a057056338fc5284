package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/urfave/cli/v2"
)

var urlFlag = &cli.StringFlag{Name: "url", Value: "http://127.0.0.1:8083", Usage: "coordinator REST URL", EnvVars: env("url")}

// call sends one REST request and prints the answer's body, indented. A
// non-2xx answer becomes an error carrying the server's message.
func call(c *cli.Context, method, path string, body []byte) error {
	data, status, err := send(c, method, path, body)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		fmt.Fprintln(c.App.Writer, status)
		return nil
	}
	var out bytes.Buffer
	if json.Indent(&out, data, "", "  ") != nil {
		out.Reset()
		out.Write(data)
	}
	fmt.Fprintln(c.App.Writer, out.String())
	return nil
}

// send sends one REST request and returns the answer's body and status
// line. A non-2xx answer becomes an error carrying the server's message.
func send(c *cli.Context, method, path string, body []byte) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(c.Context, method, c.String("url")+path, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := authorizeRequest(c, req); err != nil {
		return nil, "", err
	}
	client, err := restClient(c)
	if err != nil {
		return nil, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) == nil && e.Message != "" {
			return nil, "", fmt.Errorf("%d: %s", resp.StatusCode, e.Message)
		}
		return nil, "", fmt.Errorf("%d: %s", resp.StatusCode, data)
	}
	return data, resp.Status, nil
}

// readBody reads a JSON document from a file, or stdin for "-".
func readBody(path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s is not valid JSON", path)
	}
	return data, nil
}

// nameArg returns the connector name argument, path-escaped.
func nameArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", fmt.Errorf("give exactly one connector name")
	}
	return url.PathEscape(c.Args().First()), nil
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
			return call(c, method, "/connectors/"+n+suffix, nil)
		},
	}
}

func connectorsCommand() *cli.Command {
	return &cli.Command{
		Name:  "connectors",
		Usage: "manage connectors through the REST API",
		Flags: clientFlags(),
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list connectors with their status", Action: func(c *cli.Context) error {
				return call(c, http.MethodGet, "/connectors?expand=status", nil)
			}},
			{
				Name: "create", Usage: "create a connector from a JSON file (name, config, initial_state, initial_offsets)",
				Flags: []cli.Flag{&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Required: true, Usage: "JSON file, or - for stdin"}},
				Action: func(c *cli.Context) error {
					body, err := readBody(c.String("file"))
					if err != nil {
						return err
					}
					return call(c, http.MethodPost, "/connectors", body)
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
				Flags: []cli.Flag{&cli.BoolFlag{Name: "reset-offsets", Usage: "reset its offsets too"}},
				Action: func(c *cli.Context) error {
					n, err := nameArg(c)
					if err != nil {
						return err
					}
					q := ""
					if c.Bool("reset-offsets") {
						q = "?reset_offsets=true"
					}
					return call(c, http.MethodDelete, "/connectors/"+n+q, nil)
				},
			},
		},
	}
}

func offsetsCommand() *cli.Command {
	return &cli.Command{
		Name:  "offsets",
		Usage: "read and change connector offsets through the REST API",
		Flags: clientFlags(),
		Subcommands: []*cli.Command{
			simple("get", "show a connector's offsets", http.MethodGet, "/offsets"),
			simple("reset", "reset a stopped connector's offsets", http.MethodDelete, "/offsets"),
			{
				Name: "alter", Usage: "alter a stopped connector's offsets from a JSON file ({\"offsets\":[…]})", ArgsUsage: "NAME",
				Flags: []cli.Flag{&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Required: true, Usage: "JSON file, or - for stdin"}},
				Action: func(c *cli.Context) error {
					n, err := nameArg(c)
					if err != nil {
						return err
					}
					body, err := readBody(c.String("file"))
					if err != nil {
						return err
					}
					return call(c, http.MethodPatch, "/connectors/"+n+"/offsets", body)
				},
			},
		},
	}
}

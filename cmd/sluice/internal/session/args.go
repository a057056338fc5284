package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// NameArg returns the one connector name argument.
func NameArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", Usage("give exactly one connector name")
	}
	return c.Args().First(), nil
}

// FileFlag is -f: a JSON file, or - for stdin.
func FileFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "file", Aliases: []string{"f"}, Required: true, Usage: "JSON file, or - for stdin"}
}

// DryRunFlag is --dry-run of an offsets change.
func DryRunFlag() cli.Flag {
	return &cli.BoolFlag{Name: "dry-run", Usage: "show the changes the command would make, with the same checks; write nothing"}
}

// ReadBody reads a JSON document from a file, or stdin for "-".
func ReadBody(path string) ([]byte, error) {
	data, err := ReadFileOrStdin(path)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s is not valid JSON", path)
	}
	return data, nil
}

// ReadFileOrStdin reads a file, or stdin for "-".
func ReadFileOrStdin(path string) ([]byte, error) {
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

// ReadJSON reads a JSON document from a file (or stdin for "-") into v:
// numbers kept exact, and a field v does not have refused, as the server
// would refuse it.
func ReadJSON(path string, v any) error {
	data, err := ReadFileOrStdin(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

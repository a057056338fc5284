package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// readFile answers a step that names a File: the file's complete lines
// (a last line without its newline is still being written and is left
// out), numbered in order: {"lines": {"000": "<line>", "001": …}}. Lines
// are object values, not array elements, because answers have their arrays
// sorted before they are compared and the order of a file's lines counts.
// A file that does not exist yet answers 404, so that a step can poll for
// it (until "lines.#" is the count it waits for).
func (s System) readFile(st Step) Record {
	path := s.expand(st.File)
	rec := Record{Step: st, Request: "READ " + path}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rec.Status = 404
		rec.Body, _ = json.Marshal(map[string]any{"error_code": 404, "message": "no file " + st.File})
		return rec
	case err != nil:
		rec.Err = err.Error()
		return rec
	}
	lines := map[string]string{}
	text := string(data)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		for n, l := range strings.Split(text[:i], "\n") {
			lines[fmt.Sprintf("%03d", n)] = l
		}
	}
	rec.Status = 200
	rec.Body, _ = json.Marshal(map[string]any{"lines": lines})
	return rec
}

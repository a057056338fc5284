// Package secretfile reads the one-line secrets that Sluice's flags name by
// file (passwords, tokens), so that a file means the same to every process
// and to the CLI: its text without the line end, refused when empty or
// longer than one line. Secrets come from files, not flags, which other
// users can read in the process list.
package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The errors of a file that holds no usable secret.
var (
	ErrEmpty     = errors.New("empty")
	ErrMultiline = errors.New("more than one line")
)

// Read returns the secret in path. Its errors are the read's, ErrEmpty or
// ErrMultiline; callers add the setting the file came from.
func Read(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err // it names the file
	}
	s := strings.TrimRight(string(data), "\r\n")
	switch {
	case s == "":
		return "", ErrEmpty
	case strings.ContainsAny(s, "\r\n"):
		return "", ErrMultiline
	}
	return s, nil
}

// ShortKeyError refuses a key file that holds too short a key.
type ShortKeyError struct{ Got, Min int }

// Error says how short the key is and how to make one.
func (e *ShortKeyError) Error() string {
	return fmt.Sprintf("the key has %d bytes, fewer than %d (make one with `openssl rand -hex 32`)", e.Got, e.Min)
}

// Key returns the signing key in path: the file's bytes without
// surrounding white space, at least min of them (a *ShortKeyError
// otherwise). Its read errors name the file; callers add the setting.
func Key(path string, min int) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key := bytes.TrimSpace(data)
	if len(key) < min {
		return nil, &ShortKeyError{Got: len(key), Min: min}
	}
	return key, nil
}

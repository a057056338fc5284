package main

import "fmt"

// send sends a request (body nil: none) and decodes its JSON answer into
// v, numbers kept as they are.
func (s *session) send(method, path string, body []byte, v any) error {
	data, _, err := s.do(method, path, body)
	if err != nil {
		return err
	}
	if err := decodeNumbers(data, v); err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return nil
}

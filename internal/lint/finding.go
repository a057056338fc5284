package lint

import (
	"fmt"
	"go/token"
)

// A Finding is one rule broken at one place.
type Finding struct {
	Pos     token.Position
	Rule    string
	Message string
}

// String formats the finding as file:line:col: message (rule).
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s (%s)", f.Pos.Filename, f.Pos.Line, f.Pos.Column, f.Message, f.Rule)
}

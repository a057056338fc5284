package lint

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// RuleSleep names the no-sleep-in-tests rule in findings.
const RuleSleep = "test-sleep"

// CountSleeps reports every use of time.Sleep in file if it is a _test.go
// file: a call, or the function taken as a value. Other files, and the
// test kit's (the caller leaves them out), may sleep.
func CountSleeps(fset *token.FileSet, file *ast.File) []Finding {
	if !strings.HasSuffix(fset.Position(file.Package).Filename, "_test.go") {
		return nil
	}
	timePkg := importName(file, "time")
	if timePkg == "" {
		return nil
	}
	var out []Finding
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == timePkg {
			out = append(out, Finding{
				Pos:     fset.Position(sel.Pos()),
				Rule:    RuleSleep,
				Message: "time.Sleep in a test: wait for a condition (the test kit's helpers) instead",
			})
		}
		return true
	})
	return out
}

// importName is the name file gives the package at path, or "" when it
// does not import it (or imports it only for its side effects).
func importName(file *ast.File, path string) string {
	for _, imp := range file.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != path {
			continue
		}
		if imp.Name == nil {
			return path[strings.LastIndex(path, "/")+1:]
		}
		if imp.Name.Name == "_" || imp.Name.Name == "." {
			return ""
		}
		return imp.Name.Name
	}
	return ""
}

package lint

import (
	"go/ast"
	"go/token"
	"strings"
)

// RuleDoc names the exported-doc rule in findings.
const RuleDoc = "exported-doc"

// CheckDocs reports every exported declaration of file without a doc
// comment: functions, methods of exported types, types, constants and
// variables. A constant or variable is also documented by the comment of
// its parenthesized group or by a comment at the end of its line. Test
// files, generated files and package main (which exports nothing) are
// skipped.
func CheckDocs(fset *token.FileSet, file *ast.File) []Finding {
	name := fset.Position(file.Package).Filename
	if strings.HasSuffix(name, "_test.go") || file.Name.Name == "main" || ast.IsGenerated(file) {
		return nil
	}
	var out []Finding
	missing := func(pos token.Pos, what, id string) {
		out = append(out, Finding{
			Pos:     fset.Position(pos),
			Rule:    RuleDoc,
			Message: "exported " + what + " " + id + " has no doc comment",
		})
	}
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil || !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				missing(d.Name.Pos(), "function", d.Name.Name)
				continue
			}
			if recv := receiverType(d.Recv); ast.IsExported(recv) {
				missing(d.Name.Pos(), "method", recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			checkGenDecl(d, missing)
		}
	}
	return out
}

// checkGenDecl reports the undocumented exported specs of one type,
// const or var declaration.
func checkGenDecl(d *ast.GenDecl, missing func(token.Pos, string, string)) {
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
				missing(s.Name.Pos(), "type", s.Name.Name)
			}
		case *ast.ValueSpec:
			if s.Doc != nil || s.Comment != nil || d.Doc != nil {
				continue
			}
			for _, n := range s.Names {
				if n.IsExported() {
					missing(n.Pos(), d.Tok.String(), n.Name)
					break
				}
			}
		}
	}
}

// receiverType is the name of a method's receiver type, without pointer
// or type parameters.
func receiverType(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

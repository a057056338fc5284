package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// A File is one parsed Go file and its slash path from the root.
type File struct {
	Path string
	AST  *ast.File
}

// ParseTree parses, with comments, every .go file under root, whatever its
// build tags, but for those under testdata, vendor, and directories whose
// name starts with . or _ (as the go command ignores them).
func ParseTree(fset *token.FileSet, root string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse: %w", err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		files = append(files, File{Path: filepath.ToSlash(rel), AST: f})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	return files, nil
}

// InDirs reports whether the slash path p is in one of dirs (slash paths
// from the same root) or below it.
func InDirs(p string, dirs []string) bool {
	for _, d := range dirs {
		d = strings.Trim(d, "/")
		if d != "" && (p == d || strings.HasPrefix(p, d+"/")) {
			return true
		}
	}
	return false
}

package httpapi

// The OpenAPI document's schemas, made from the Go types the API encodes
// and decodes (the api module's), with their doc
// comments as descriptions: a field's json name, and omitempty or omitzero
// for a property that is not required.

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"
)

// schemaSources are the directories of the packages whose types become
// component schemas, by package name, relative to this package.
var schemaSources = map[string]string{"api": "../../../api"}

// typeDocs are doc comments: "pkg.Type" and "pkg.Type.Field" to the text.
type typeDocs map[string]string

// readTypeDocs parses the doc comments of the types and fields of the
// packages in schemaSources.
func readTypeDocs() (typeDocs, error) {
	docs := typeDocs{}
	fset := token.NewFileSet()
	for pkg, dir := range schemaSources {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("parsing %s: %w", name, err)
			}
			docs.add(pkg, f)
		}
	}
	return docs, nil
}

// add records the type and field comments of one file.
func (d typeDocs) add(pkg string, f *ast.File) {
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			d[pkg+"."+ts.Name.Name] = commentText(doc)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, field := range st.Fields.List {
				text := commentText(field.Doc)
				if text == "" {
					text = commentText(field.Comment)
				}
				for _, n := range field.Names {
					d[pkg+"."+ts.Name.Name+"."+n.Name] = text
				}
			}
		}
	}
}

// commentText is a comment as one paragraph.
func commentText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}

// schemaGen makes schemas of Go types, and the component schemas of the
// named struct types it meets.
type schemaGen struct {
	docs  typeDocs
	comps map[string]any
	types map[string]reflect.Type // component name to its type
}

func newSchemaGen(docs typeDocs) *schemaGen {
	return &schemaGen{docs: docs, comps: map[string]any{}, types: map[string]reflect.Type{}}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// goTypeName is how a component names its Go type: package.Type.
func goTypeName(t reflect.Type) string {
	return filepath.Base(t.PkgPath()) + "." + t.Name()
}

// component reports whether t becomes a component schema of its own.
func component(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.Name() == "" || t == timeType {
		return false
	}
	_, ok := schemaSources[filepath.Base(t.PkgPath())]
	return ok
}

// schema is the schema of t: a $ref for a component.
func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == rawType:
		return map[string]any{"type": []any{"integer", "string"}}
	case component(t):
		return map[string]any{"$ref": g.ref(t)}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Int32:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Pointer:
		return nullable(g.schema(t.Elem()))
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Array:
		// A tuple of fixed length: a lag sample's [time, lag].
		return map[string]any{"type": "array", "items": g.schema(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		s := map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
		if t.Elem().Kind() == reflect.Interface {
			// A free-form map (an offset's partition or offset) is null
			// where a change has none.
			s["type"] = []any{"object", "null"}
		}
		return s
	case reflect.Struct:
		return g.object(t)
	}
	panic(fmt.Sprintf("no schema for Go type %s", t))
}

// nullable is s, or null.
func nullable(s map[string]any) map[string]any {
	if typ, ok := s["type"].(string); ok {
		out := map[string]any{}
		for k, v := range s {
			out[k] = v
		}
		out["type"] = []any{typ, "null"}
		return out
	}
	return map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
}

// ref is the reference to t's component, made the first time.
func (g *schemaGen) ref(t reflect.Type) string {
	name := t.Name()
	if have, ok := g.types[name]; ok && have != t {
		panic(fmt.Sprintf("two types named %s: %s and %s", name, goTypeName(have), goTypeName(t)))
	}
	if _, ok := g.types[name]; !ok {
		g.types[name] = t
		s := g.object(t)
		s["x-go-type"] = goTypeName(t)
		if doc := g.docs[goTypeName(t)]; doc != "" {
			s["description"] = doc
		}
		g.comps[name] = s
	}
	return "#/components/schemas/" + name
}

// object is the schema of a struct as encoding/json writes it: embedded
// structs' fields promoted, omitempty and omitzero fields not required.
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		ft := f.Type
		if omit && ft.Kind() == reflect.Pointer {
			ft = ft.Elem() // a nil pointer is left out, never null
		}
		s := g.schema(ft)
		if doc := g.docs[goTypeName(t)+"."+f.Name]; doc != "" {
			// In 3.1 a $ref may have a description beside it.
			s["description"] = doc
		}
		props[name] = s
		if !omit {
			*required = append(*required, name)
		}
	}
}

// openAPIRoot is the directory of the module's root from this package.
const openAPIRoot = "../../.."

// readOpenAPIFile reads the committed document.
func readOpenAPIFile() ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(openAPIRoot, "api", "openapi.json"))
	if err != nil {
		return nil, fmt.Errorf("reading the committed OpenAPI document: %w", err)
	}
	return data, nil
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestOpenAPIDocument fails when api/openapi.json differs from what the
// route table, opDocs and the api types make; -update-openapi rewrites it.
func TestOpenAPIDocument(t *testing.T) {
	doc, _, err := openAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	want, err := marshalOpenAPI(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readOpenAPIFile()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	if *updateOpenAPI {
		if err := os.WriteFile(filepath.Join(openAPIRoot, "api", "openapi.json"), want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("api/openapi.json differs from the route table and the api types; run go generate ./coordinator/internal/httpapi (go test -run TestOpenAPIDocument -update-openapi)")
}

// committedOpenAPI is the committed document, parsed.
func committedOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	data, err := readOpenAPIFile()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, api.OpenAPI()) {
		t.Fatal("api.OpenAPI() is not api/openapi.json")
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	return doc
}

// obj is v as a JSON object, or nil.
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// TestOpenAPIRoutes checks the committed document against the route
// table: every route is an operation with exactly its method, role,
// scope, probe rule and error answers, and every path of the document
// is a route's.
func TestOpenAPIRoutes(t *testing.T) {
	doc := committedOpenAPI(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi %v, want 3.1.0", doc["openapi"])
	}
	paths := obj(doc["paths"])
	methods := map[string][]string{} // path → methods of the route table
	for _, rt := range routes() {
		method, path := routePath(rt)
		methods[path] = append(methods[path], strings.ToLower(method))
		op := obj(obj(paths[path])[strings.ToLower(method)])
		if op == nil {
			t.Errorf("%s: no operation %s %s in the document", rt.op, method, path)
			continue
		}
		checkOperation(t, doc, rt, op)
	}
	for path, item := range paths {
		want, ok := methods[path]
		if !ok {
			t.Errorf("path %s of the document is no route", path)
			continue
		}
		var got []string
		for k := range obj(item) {
			got = append(got, k)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("path %s: methods %v in the document, %v in the route table", path, got, want)
		}
	}
	if len(paths) != len(methods) {
		t.Errorf("%d paths in the document, %d in the route table", len(paths), len(methods))
	}
}

// checkOperation compares one operation with its route.
func checkOperation(t *testing.T, doc map[string]any, rt route, op map[string]any) {
	t.Helper()
	want := map[string]any{
		"operationId": rt.op, "x-sluice-role": rt.role.String(), "x-sluice-connector-scoped": rt.connectorScoped(),
		"x-sluice-open-probe": probeOps[rt.op], "x-sluice-forwarded-to-leader": forwardedToLeader(rt),
	}
	for k, v := range want {
		if op[k] != v {
			t.Errorf("%s: %s is %v, want %v", rt.op, k, op[k], v)
		}
	}
	if s, _ := op["summary"].(string); s == "" {
		t.Errorf("%s: no summary", rt.op)
	}
	open := false
	for _, alt := range op["security"].([]any) {
		open = open || len(obj(alt)) == 0
	}
	if open != probeOps[rt.op] {
		t.Errorf("%s: open without credentials %v in the document, %v in probeOps", rt.op, open, probeOps[rt.op])
	}
	var errs []int
	for code, r := range obj(op["responses"]) {
		status, err := strconv.Atoi(code)
		if err != nil {
			t.Errorf("%s: response %q", rt.op, code)
			continue
		}
		ref, _ := obj(r)["$ref"].(string)
		if status < 400 || ref == "" {
			continue
		}
		errs = append(errs, status)
		if ref != fmt.Sprintf("#/components/responses/Error%d", status) {
			t.Errorf("%s: %d answers %s", rt.op, status, ref)
		}
		body := obj(obj(obj(obj(obj(doc["components"])["responses"])[strings.TrimPrefix(ref, "#/components/responses/")])["content"])["application/json"])
		if obj(body["schema"])["$ref"] != "#/components/schemas/ErrorBody" {
			t.Errorf("%s: %d is not the error body: %v", rt.op, status, body)
		}
	}
	slices.Sort(errs)
	if wantErrs := routeErrorStatuses(rt); !slices.Equal(errs, wantErrs) {
		t.Errorf("%s: error answers %v in the document, want %v", rt.op, errs, wantErrs)
	}
	// A path parameter per wildcard, each required.
	_, path := routePath(rt)
	var params []string
	for _, p := range anySlice(op["parameters"]) {
		if obj(p)["in"] == "path" {
			params = append(params, obj(p)["name"].(string))
		}
	}
	if wantParams := pathParams(path); !slices.Equal(params, wantParams) {
		t.Errorf("%s: path parameters %v, want %v", rt.op, params, wantParams)
	}
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestOpenAPIExamples round-trips every example of the document through
// the Go type of its schema: it decodes with unknown fields refused, and
// encodes back to the same JSON.
func TestOpenAPIExamples(t *testing.T) {
	doc := committedOpenAPI(t)
	_, types, err := openAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	schemas := obj(obj(doc["components"])["schemas"])
	for name, s := range schemas {
		typ, ok := types[name]
		if !ok || obj(s)["x-go-type"] != goTypeName(typ) {
			t.Errorf("schema %s: x-go-type %v, the generator's %v", name, obj(s)["x-go-type"], typ)
		}
	}
	checked := 0
	check := func(where string, media map[string]any) {
		var examples []any
		if ex, ok := media["example"]; ok {
			examples = append(examples, ex)
		}
		for _, named := range obj(media["examples"]) {
			examples = append(examples, obj(named)["value"])
		}
		for _, ex := range examples {
			if err := roundTripExample(types, obj(media["schema"]), ex); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			checked++
		}
	}
	for path, item := range obj(doc["paths"]) {
		for method, op := range obj(item) {
			where := strings.ToUpper(method) + " " + path
			for ct, media := range obj(obj(obj(op)["requestBody"])["content"]) {
				check(where+" request "+ct, obj(media))
			}
			for status, r := range obj(obj(op)["responses"]) {
				for ct, media := range obj(obj(r)["content"]) {
					check(where+" "+status+" "+ct, obj(media))
				}
			}
		}
	}
	for name, r := range obj(obj(doc["components"])["responses"]) {
		for ct, media := range obj(obj(r)["content"]) {
			check(name+" "+ct, obj(media))
		}
	}
	if checked < len(routes()) {
		t.Errorf("only %d examples checked", checked)
	}
}

// roundTripExample decodes example into the Go type of schema, strictly,
// and checks it encodes back to the same JSON. A oneOf schema takes the
// first alternative the example round-trips through.
func roundTripExample(types map[string]reflect.Type, schema map[string]any, example any) error {
	if alts, ok := schema["oneOf"].([]any); ok {
		var errs []string
		for _, alt := range alts {
			err := roundTripExample(types, obj(alt), example)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("no alternative of oneOf takes the example: %s", strings.Join(errs, "; "))
	}
	typ, err := schemaGoType(types, schema)
	if err != nil {
		return err
	}
	data, err := json.Marshal(example)
	if err != nil {
		return fmt.Errorf("encoding the example: %w", err)
	}
	v := reflect.New(typ)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return fmt.Errorf("decoding the example into %s: %w", typ, err)
	}
	back, err := json.Marshal(v.Elem().Interface())
	if err != nil {
		return fmt.Errorf("encoding %s: %w", typ, err)
	}
	var a, b any
	if err := json.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("decoding the example: %w", err)
	}
	if err := json.Unmarshal(back, &b); err != nil {
		return fmt.Errorf("decoding %s's JSON: %w", typ, err)
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("the example does not round-trip through %s:\n  %s\n  %s", typ, data, back)
	}
	return nil
}

// schemaGoType is the Go type a schema describes: a component's, or a
// list or map of one, or a string.
func schemaGoType(types map[string]reflect.Type, s map[string]any) (reflect.Type, error) {
	if ref, ok := s["$ref"].(string); ok {
		typ, ok := types[strings.TrimPrefix(ref, "#/components/schemas/")]
		if !ok {
			return nil, fmt.Errorf("no Go type for %s", ref)
		}
		return typ, nil
	}
	typ := s["type"]
	if list, ok := typ.([]any); ok && len(list) == 2 && list[1] == "null" {
		typ = list[0]
	}
	switch typ {
	case "string":
		return reflect.TypeFor[string](), nil
	case "array":
		elem, err := schemaGoType(types, obj(s["items"]))
		if err != nil {
			return nil, err
		}
		return reflect.SliceOf(elem), nil
	case "object":
		if add := obj(s["additionalProperties"]); add != nil {
			if len(add) == 0 {
				return reflect.TypeFor[map[string]any](), nil
			}
			elem, err := schemaGoType(types, add)
			if err != nil {
				return nil, err
			}
			if t, _ := add["type"].([]any); len(t) == 2 && t[1] == "null" {
				elem = reflect.PointerTo(elem)
			}
			return reflect.MapOf(reflect.TypeFor[string](), elem), nil
		}
	case "integer":
		return reflect.TypeFor[int64](), nil
	}
	return nil, fmt.Errorf("no Go type for schema %v", s)
}

// TestOpenAPICounts keeps the report of what the document covers honest:
// one operation per route.
func TestOpenAPICounts(t *testing.T) {
	doc := committedOpenAPI(t)
	ops := 0
	var paths []string
	for path, item := range obj(doc["paths"]) {
		ops += len(obj(item))
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if ops != len(routes()) {
		t.Errorf("%d operations in the document, %d routes", ops, len(routes()))
	}
	t.Logf("%d paths, %d operations, %d schemas", len(paths), ops, len(obj(obj(doc["components"])["schemas"])))
}

// documentedStatuses is what the document lets route rt answer: its success
// and its error statuses.
func documentedStatuses(t *testing.T, doc map[string]any, rt route) map[int]bool {
	t.Helper()
	method, path := routePath(rt)
	out := map[int]bool{}
	for code := range obj(obj(obj(obj(doc["paths"])[path])[strings.ToLower(method)])["responses"]) {
		n, err := strconv.Atoi(code)
		if err != nil {
			t.Fatalf("%s: response %q", rt.op, code)
		}
		out[n] = true
	}
	return out
}

func hasRequestBody(doc map[string]any, rt route) bool {
	method, path := routePath(rt)
	return obj(obj(obj(doc["paths"])[path])[strings.ToLower(method)])["requestBody"] != nil
}

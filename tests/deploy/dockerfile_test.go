package deploy

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// repoRoot is the main module's directory, the Dockerfile's build context.
var repoRoot = filepath.Join("..", "..")

// TestDockerfile checks the image the manifests run: its last stage is FROM
// scratch, runs as a numeric non-root user (scratch has no /etc/passwd to
// resolve a name) and starts a binary it copies from the build stage, where
// a cgo-free go build writes it.
func TestDockerfile(t *testing.T) {
	img := parseDockerfile(t)
	t.Logf("final stage FROM %s, USER %s, ENTRYPOINT %s; built by: %s", img.base, img.user, img.entrypoint, strings.Join(img.build, " "))
}

// TestDockerfileBinaryIsStatic runs the Dockerfile's build command (into a
// temporary file instead of its -o path) and checks that the binary is
// static: no ELF interpreter and no dynamic section, so it runs FROM
// scratch.
func TestDockerfileBinaryIsStatic(t *testing.T) {
	img := parseDockerfile(t)
	bin := filepath.Join(t.TempDir(), "sluice")
	var env, args []string
	for i, a := range img.build {
		switch {
		case len(args) == 0 && strings.Contains(a, "=") && a != "go":
			env = append(env, a)
		case i > 0 && img.build[i-1] == "-o":
			args = append(args, bin)
		default:
			args = append(args, a)
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(env, " "), strings.Join(args, " "), err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: it is linked dynamically", p.Type)
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		t.Errorf("the binary has a .dynamic section: it is linked dynamically")
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
}

// image is what the test reads from the Dockerfile.
type image struct {
	base       string   // the last stage's FROM
	user       string   // its USER
	entrypoint string   // the program its ENTRYPOINT runs
	build      []string // the RUN that writes the program, split into words
}

type stage struct {
	name  string
	base  string
	nodes []*parser.Node
}

// parseDockerfile parses the Dockerfile with BuildKit's parser and checks
// the rules TestDockerfile names, failing the test where one is broken.
func parseDockerfile(t *testing.T) image {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the Dockerfile does not parse: %v", err)
	}
	var stages []*stage
	for _, n := range res.AST.Children {
		if instruction(n) == "from" {
			args := words(n)
			s := &stage{base: args[0]}
			if len(args) == 3 && strings.EqualFold(args[1], "as") {
				s.name = args[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("line %d: %s before any FROM", n.StartLine, n.Original)
		}
		stages[len(stages)-1].nodes = append(stages[len(stages)-1].nodes, n)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	final := stages[len(stages)-1]
	img := image{base: final.base}
	if img.base != "scratch" {
		t.Errorf("the image is FROM %s, want scratch", img.base)
	}
	for _, n := range final.nodes {
		switch instruction(n) {
		case "user":
			img.user = words(n)[0]
		case "entrypoint":
			if n.Attributes["json"] {
				img.entrypoint = words(n)[0]
			}
		}
	}
	uid, _, _ := strings.Cut(img.user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %q, want a numeric non-root uid", img.user)
	}
	if img.entrypoint == "" {
		t.Fatal("the image has no ENTRYPOINT in JSON form")
	}

	// The COPY that puts the program in place, and the stage it is from.
	var from, src string
	for _, n := range final.nodes {
		args := words(n)
		if instruction(n) != "copy" || len(args) != 2 {
			continue
		}
		dst := args[1]
		if strings.HasSuffix(dst, "/") {
			dst = path.Join(dst, path.Base(args[0]))
		}
		if dst == img.entrypoint {
			src = args[0]
			for _, f := range n.Flags {
				if v, ok := strings.CutPrefix(f, "--from="); ok {
					from = v
				}
			}
		}
	}
	if src == "" || from == "" {
		t.Fatalf("no COPY --from=<stage> puts %s in the image", img.entrypoint)
	}
	i := slices.IndexFunc(stages, func(s *stage) bool { return s.name == from })
	if i < 0 {
		t.Fatalf("COPY --from=%s names no stage", from)
	}
	for _, n := range stages[i].nodes {
		w := strings.Fields(strings.Join(words(n), " "))
		o := slices.Index(w, "-o")
		if instruction(n) == "run" && o >= 0 && o+1 < len(w) && w[o+1] == src {
			img.build = w
		}
	}
	if img.build == nil {
		t.Fatalf("no RUN of stage %s writes %s with -o", from, src)
	}
	if goAt := slices.Index(img.build, "go"); goAt < 0 || goAt+1 >= len(img.build) || img.build[goAt+1] != "build" ||
		!slices.Contains(img.build[:goAt], "CGO_ENABLED=0") {
		t.Errorf("%s is written by %q, want CGO_ENABLED=0 go build …", src, strings.Join(img.build, " "))
	}
	return img
}

// instruction is n's instruction in lower case.
func instruction(n *parser.Node) string { return strings.ToLower(n.Value) }

// words returns an instruction's arguments.
func words(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docStep is one command of a Markdown sh block, as a user pastes it: its
// lines joined while a line ends in a backslash or a quote is open, with
// the comment lines just before it (which may say what it answers).
type docStep struct {
	line    int
	text    string
	comment string
}

// docSteps are the commands of the first sh code block after each of the
// headings of the Markdown file at path, in order.
func docSteps(t *testing.T, path string, headings ...string) []docStep {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docStep
	for _, h := range headings {
		sc := bufio.NewScanner(bytes.NewReader(data))
		n, state := 0, "heading" // heading → block → in → done
		var cur *docStep
		var comment []string
		for sc.Scan() && state != "done" {
			n++
			l := sc.Text()
			switch {
			case state == "heading":
				if l == h {
					state = "block"
				}
				continue
			case state == "block":
				if strings.HasPrefix(l, "```sh") {
					state = "in"
				}
				continue
			case strings.HasPrefix(l, "```"):
				state = "done"
				continue
			}
			if cur != nil {
				// A backslash-newline continues the line (sh drops both);
				// an open quote keeps the newline.
				if c, ok := strings.CutSuffix(cur.text, "\\"); ok {
					cur.text = c + " " + strings.TrimSpace(l)
				} else {
					cur.text += "\n" + l
				}
			} else {
				tl := strings.TrimSpace(l)
				switch {
				case tl == "":
					comment = nil
					continue
				case strings.HasPrefix(tl, "#"):
					comment = append(comment, strings.TrimSpace(strings.TrimPrefix(tl, "#")))
					continue
				}
				cur = &docStep{line: n, text: tl, comment: strings.Join(comment, " ")}
				comment = nil
			}
			if _, err := shellWords(cur.text); err == nil && !strings.HasSuffix(cur.text, "\\") {
				out, cur = append(out, *cur), nil
			}
		}
		if state != "done" || cur != nil {
			t.Fatalf("%s: no complete sh block after %q", path, h)
		}
	}
	return out
}

// catLine is `cat FILE  # line, line, …`: the doc says what FILE holds.
var catLine = regexp.MustCompile(`^cat (\S+)\s+#\s*(.+)$`)

// TestReadmeCurlWalkthrough runs the README's five-minute walk-through
// with curl, and its "Create at a position", as written and in order
// against a real cluster: every curl must succeed, an answer the comment
// before it shows must come (offsets are flushed a moment after the
// records), and a `cat file  # a, b` must show those lines.
func TestReadmeCurlWalkthrough(t *testing.T) {
	steps := docSteps(t, filepath.Join("..", "..", "README.md"), "## A five-minute walk-through", "## Create at a position")
	cl := startCluster(t)
	t.Chdir(cl.WorkDir)
	curls, shown := 0, 0 // commands run; answers and files checked
	for _, s := range steps {
		where := fmt.Sprintf("README.md:%d: %s", s.line, s.text)
		switch word, _, _ := strings.Cut(s.text, " "); word {
		case "printf":
			if out, err := exec.Command("sh", "-c", s.text).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", where, err, out)
			}
		case "cat":
			m := catLine.FindStringSubmatch(s.text)
			if m == nil {
				t.Fatalf("%s: a cat line without the lines it shows", where)
			}
			want := strings.Split(m[2], ", ")
			shown++
			eventually(t, 30*time.Second, func() (bool, string) {
				data, _ := os.ReadFile(m[1])
				got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
				return reflect.DeepEqual(got, want), fmt.Sprintf("%s: %q", where, got)
			})
		case "curl":
			curls++
			req := curlRequest(t, where, s.text, cl.URL)
			body := doCurl(t, where, req)
			if i := strings.Index(s.comment, "{"); i >= 0 && req.method == http.MethodGet {
				want := s.comment[i:]
				shown++
				eventually(t, 30*time.Second, func() (bool, string) {
					ok, msg := jsonEqual(body, want), fmt.Sprintf("%s: %s, want %s", where, body, want)
					if !ok {
						body = doCurl(t, where, req) // a GET: asked again until it holds
					}
					return ok, msg
				})
			}
		default:
			t.Fatalf("%s: a command the walk-through test does not know", where)
		}
	}
	if curls < 10 || shown < 3 {
		t.Fatalf("ran only %d curl commands of the README and checked %d shown answers", curls, shown)
	}
	// The walk-through deleted its source (and reset its offsets); the
	// sink and the source created at a position are left.
	if got := doCurl(t, "GET /connectors", curlReq{method: http.MethodGet, url: cl.URL + "/connectors"}); !jsonEqual(got, `["file-sink","file-src-1"]`) &&
		!jsonEqual(got, `["file-src-1","file-sink"]`) {
		t.Errorf("connectors after the walk-through: %s", got)
	}
}

// curlReq is a curl command line's request.
type curlReq struct {
	method, url string
	header      http.Header
	body        *string
}

// curlRequest reads the README's curl flags (-s, -X, -H, -d), its URL
// sent to base instead of localhost:8083.
func curlRequest(t *testing.T, where, text, base string) curlReq {
	t.Helper()
	words, err := shellWords(text)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	req := curlReq{header: http.Header{}}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s":
		case "-X", "-H", "-d":
			if i++; i == len(words) {
				t.Fatalf("%s: %s without its value", where, w)
			}
			switch v := words[i]; w {
			case "-X":
				req.method = v
			case "-H":
				name, value, _ := strings.Cut(v, ":")
				req.header.Set(name, strings.TrimSpace(value))
			case "-d":
				req.body = &v
			}
		default:
			if strings.HasPrefix(w, "-") || req.url != "" {
				t.Fatalf("%s: curl flag or argument %q the test does not know", where, w)
			}
			rest, ok := strings.CutPrefix(w, "localhost:8083")
			if !ok {
				t.Fatalf("%s: a URL not on localhost:8083", where)
			}
			req.url = base + rest
		}
	}
	if req.method == "" {
		// curl's own default: -d posts, as a form unless told otherwise.
		req.method = http.MethodGet
		if req.body != nil {
			req.method = http.MethodPost
		}
	}
	if req.body != nil && req.header.Get("Content-Type") == "" {
		req.header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req
}

// doCurl sends req and returns its answer's body; an answer other than
// 2xx fails the test, as it would fail the reader's walk-through.
func doCurl(t *testing.T, where string, req curlReq) string {
	t.Helper()
	var rd io.Reader
	if req.body != nil {
		rd = strings.NewReader(*req.body)
	}
	hr, err := http.NewRequest(req.method, req.url, rd)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	hr.Header = req.header.Clone()
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(hr)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: %d %s", where, resp.StatusCode, data)
	}
	return string(data)
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

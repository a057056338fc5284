package conformance

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// jacksonMessage matches the start of the messages upstream's Jackson
// binding produces; the rest of such a message (source locations, class
// names, the list of known properties) differs by version and is dropped.
var jacksonMessage = regexp.MustCompile(`^(Cannot deserialize value|Unrecognized field "[^"]*"|Cannot construct instance of ` +
	"`[^`]*`" + `|Unexpected character|Unexpected end-of-input|Unexpected close marker|No content to map|Cannot coerce|Illegal unquoted character)`)

// normalizer rewrites one system's answers into the form they are compared in.
type normalizer struct {
	sys System
	// mine keeps only names of this system's connectors (Step.Mine).
	mine bool
}

// text replaces the system's names by the scenario placeholders.
func (n normalizer) text(s string) string {
	r := []string{}
	if n.sys.Dir != "" {
		r = append(r, n.sys.Dir, "${dir}")
	}
	if n.sys.ConnPrefix != "" {
		r = append(r, n.sys.ConnPrefix, "${c}")
	}
	if n.sys.TopicPrefix != "" {
		r = append(r, n.sys.TopicPrefix, "${t}")
	}
	if len(r) == 0 {
		return s
	}
	return strings.NewReplacer(r...).Replace(s)
}

// pluginList matches the list of installed connectors that ends an
// unknown-class message: each system lists its own plugins.
var pluginList = regexp.MustCompile(`(available connectors are: ).*$`)

// cachedLookup is the exception class Kafka Connect 4.4 puts before an
// unknown-class message when the same class name was looked up before (the
// first lookup of a name answers without it): history, not interface.
var cachedLookup = regexp.MustCompile(`org\.apache\.kafka\.connect\.errors\.ConnectException: (Failed to find any class that implements Connector)`)

// message normalises an error message of an answer with the given status:
// names, the plugin list of an unknown-class message, and the detail of a
// Jackson 500.
func (n normalizer) message(s string, status int) string {
	s = pluginList.ReplaceAllString(n.text(s), "${1}<list>")
	s = cachedLookup.ReplaceAllString(s, "${1}")
	if status == 500 {
		if m := jacksonMessage.FindString(s); m != "" {
			return m + " <Jackson detail>"
		}
	}
	return s
}

// value normalises a decoded JSON body of an answer with the given status:
// names, worker ids, traces, messages, order.
func (n normalizer) value(v any, key string, status int) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		name, _ := x["name"].(string)
		for k, e := range x {
			nk := n.text(k)
			switch k {
			case "worker_id":
				out[nk] = "<worker>"
			case "documentation":
				// Prose; Sluice documents what it does differently (spec §0).
				out[nk] = "<doc>"
			case "default_value":
				if strings.HasSuffix(name, ".plugin.version") {
					out[nk] = "<version>"
					continue
				}
				out[nk] = n.value(e, k, status)
			case "version":
				// Plugin and worker versions differ by product (KIP-891
				// adds them to statuses); their presence is what counts.
				if _, ok := e.(string); ok {
					out[nk] = "<version>"
					continue
				}
				out[nk] = n.value(e, k, status)
			case "trace":
				out[nk] = "<trace>"
			case "message":
				if s, ok := e.(string); ok {
					out[nk] = n.message(s, status)
					continue
				}
				out[nk] = n.value(e, k, status)
			default:
				out[nk] = n.value(e, k, status)
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				if name, _ := m["name"].(string); strings.HasPrefix(name, "sluice.") {
					continue // Sluice's own config keys (placement) have no upstream peer
				}
			}
			out = append(out, n.value(e, key, status))
		}
		sort.SliceStable(out, func(i, j int) bool { return canonical(out[i]) < canonical(out[j]) })
		return out
	case string:
		return n.text(x)
	default:
		return v
	}
}

// view is the part of an answer that a step compares, as canonical JSON.
func (n normalizer) view(rec Record) string {
	if rec.Err != "" {
		return canonical(map[string]any{"error": rec.Err})
	}
	body, isJSON := decode(rec.Body)
	if n.mine {
		body = n.onlyMine(body)
	}
	v := map[string]any{"status": rec.Status}
	msg := func() {
		if m, ok := body.(map[string]any); ok {
			if s, ok := m["message"].(string); ok {
				v["message"] = n.message(s, rec.Status)
				return
			}
			v["message"] = m["message"]
			return
		}
		v["body"] = n.text(strings.TrimSpace(string(rec.Body)))
	}
	switch rec.Step.Compare {
	case "status":
	case "message":
		msg()
	case "keys":
		if m, ok := body.(map[string]any); ok {
			keys := []string{}
			for k := range m {
				keys = append(keys, n.text(k)) // names carry the system's prefix
			}
			sort.Strings(keys)
			v["keys"] = keys
		} else {
			msg()
		}
	case "fields":
		if m, ok := body.(map[string]any); ok {
			f := map[string]any{}
			for _, k := range rec.Step.Keys {
				f[k] = n.value(m[k], k, rec.Status)
			}
			v["fields"] = f
		} else {
			msg()
		}
	case "state":
		if rec.Status != 200 {
			msg()
			break
		}
		st := map[string]any{}
		for _, path := range []string{"name", "type", "connector.state"} {
			x, _ := lookup(body, path)
			st[path] = n.value(x, path, rec.Status)
		}
		var tasks []any
		list, _ := lookup(body, "tasks")
		ts, _ := list.([]any)
		for _, t := range ts {
			id, _ := lookup(t, "id")
			state, _ := lookup(t, "state")
			tasks = append(tasks, map[string]any{"id": id, "state": state})
		}
		st["tasks"] = tasks
		v["state"] = st
	case "validate":
		m, ok := body.(map[string]any)
		if rec.Status != 200 || !ok {
			msg()
			break
		}
		v["name"] = m["name"]
		v["error_count"] = m["error_count"]
		errs := map[string]any{}
		configs, _ := m["configs"].([]any)
		for _, c := range configs {
			val, _ := lookup(c, "value")
			name, _ := lookup(val, "name")
			for _, want := range rec.Step.Keys {
				if name == want {
					e, _ := lookup(val, "errors")
					errs[want] = n.value(e, "errors", rec.Status)
				}
			}
		}
		v["errors"] = errs
	case "plugins":
		list, ok := body.([]any)
		if !ok {
			msg()
			break
		}
		var out []any
		for _, p := range list {
			m, _ := p.(map[string]any)
			cls, _ := m["class"].(string)
			// The plugins both have: Kafka's FileStream connectors, and its
			// transformations and predicates (Sluice's in Go).
			if !strings.HasPrefix(cls, "org.apache.kafka.connect.file.") && !strings.HasPrefix(cls, "org.apache.kafka.connect.transforms.") {
				continue
			}
			e := map[string]any{}
			for k, x := range m {
				e[k] = x
			}
			if _, ok := e["version"]; ok {
				e["version"] = "<version>"
			}
			out = append(out, e)
		}
		v["plugins"] = n.value(out, "plugins", rec.Status)
	default: // full
		if isJSON {
			v["body"] = n.value(body, "", rec.Status)
		} else if len(rec.Body) > 0 {
			v["body"] = n.text(strings.TrimSpace(string(rec.Body)))
		}
		if rec.Location != "" {
			v["location"] = n.text(rec.Location)
		}
	}
	return canonical(v)
}

// onlyMine keeps, in a top-level array of names or a top-level object keyed
// by names, only this system's connectors.
func (n normalizer) onlyMine(body any) any {
	switch x := body.(type) {
	case []any:
		out := []any{}
		for _, e := range x {
			if s, ok := e.(string); ok && strings.HasPrefix(s, n.sys.ConnPrefix) {
				out = append(out, e)
			}
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if strings.HasPrefix(k, n.sys.ConnPrefix) {
				out[k] = e
			}
		}
		return out
	}
	return body
}

// errorMessage is the "message" of an error body, normalised ("" if none).
func (n normalizer) errorMessage(rec Record) string {
	body, ok := decode(rec.Body)
	if !ok {
		return ""
	}
	m, _ := body.(map[string]any)
	s, _ := m["message"].(string)
	return n.message(s, rec.Status)
}

// summary is a short form of an answer for reports: status and body.
func (n normalizer) summary(rec Record) string {
	if rec.Err != "" {
		return "error: " + rec.Err
	}
	b := n.text(strings.TrimSpace(string(rec.Body)))
	if body, ok := decode(rec.Body); ok {
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(n.value(body, "", rec.Status)) == nil {
			b = strings.TrimSpace(buf.String())
		}
	}
	if len(b) > 600 {
		b = b[:600] + "…"
	}
	s := itoa(rec.Status)
	if b != "" {
		s += " " + b
	}
	if rec.TimedOut {
		s += " (poll timed out)"
	}
	return s
}

func itoa(i int) string {
	data, _ := json.Marshal(i)
	return string(data)
}

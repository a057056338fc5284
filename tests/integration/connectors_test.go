package integration

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/version"
	"github.com/sluice-io/sluice/sluicetest"
)

// validationMessage is the 400 message of a create or config change whose
// config has errors (spec §3).
func validationMessage(errs ...string) string {
	return "Connector configuration is invalid and contains the following " + itoa10(len(errs)) + " error(s):\n" +
		strings.Join(errs, "\n") +
		"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
}

func itoa10(n int) string { b, _ := json.Marshal(n); return string(b) }

const missingFile = `Missing required configuration "file" which has no default value.`

// workerID is the coordinator's worker id: its REST address.
func workerID(c *sluicetest.Cluster) string { return strings.TrimPrefix(c.URL, "http://") }

func TestEndpointsServerInfoAndHealth(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})

	r := c.Must(http.StatusOK, "GET", "/", nil)
	var info map[string]any
	r.JSON(t, &info)
	for _, k := range []string{"version", "commit", "kafka_cluster_id"} {
		if s, ok := info[k].(string); !ok || (k != "commit" && s == "") {
			t.Errorf("GET / %s = %#v in %s", k, info[k], r.Body)
		}
	}
	// The version is the Kafka Connect level clients gate on (kcctl:
	// tests/thirdparty); Sluice's own is beside it, in the body and a header.
	if info["version"] != api.KafkaConnectVersion || info["sluice_version"] != version.Version || r.Header.Get(api.VersionHeader) != version.Version {
		t.Errorf("GET / = %s with %s %q, want version %s and Sluice's %s beside it", r.Body, api.VersionHeader, r.Header.Get(api.VersionHeader),
			api.KafkaConnectVersion, version.Version)
	}

	r = c.Must(http.StatusOK, "GET", "/health", nil)
	var health map[string]any
	r.JSON(t, &health)
	if health["status"] != "healthy" || health["message"] != "Worker has completed startup and is ready to handle requests." {
		t.Errorf("GET /health = %s", r.Body)
	}
}

func TestEndpointsCreate(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("create")
	gen := generatorCfg(topic)

	created := []struct {
		name, initial, state string
		tasks                int
	}{
		{"default-state", "", "RUNNING", 1},
		{"lower-running", "running", "RUNNING", 1},
		{"mixed-paused", "Paused", "PAUSED", 0},
		{"upper-stopped", "STOPPED", "STOPPED", 0},
	}
	for _, tt := range created {
		t.Run("initial_state="+tt.name, func(t *testing.T) {
			r := mustCreate(c, tt.name, gen, tt.initial)
			if loc := r.Header.Get("Location"); loc != c.URL+"/connectors/"+tt.name {
				t.Errorf("Location = %q", loc)
			}
			wantJSON(t, r, http.StatusCreated, `{"name":"`+tt.name+`","config":{"connector.class":"`+classGenerator+
				`","topic":"`+topic+`","rate":"50","name":"`+tt.name+`"},"tasks":[],"type":"source"}`)
			taskState := tt.state
			c.WaitState(tt.name, tt.state, tt.tasks, taskState)
		})
	}

	t.Run("name is trimmed", func(t *testing.T) {
		r := c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "  trimmed ", "config": gen})
		var info struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		r.JSON(t, &info)
		if info.Name != "trimmed" || info.Config["name"] != "trimmed" {
			t.Errorf("created %s", r.Body)
		}
		c.Must(http.StatusOK, "GET", "/connectors/trimmed", nil)
	})

	bad := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"invalid initial_state", map[string]any{"name": "bad-initial", "config": gen, "initial_state": "STARTED"},
			400, "Invalid initial_state 'STARTED': must be one of RUNNING, PAUSED, STOPPED"},
		{"empty initial_state word", map[string]any{"name": "bad-initial2", "config": gen, "initial_state": "run"},
			400, "Invalid initial_state 'run': must be one of RUNNING, PAUSED, STOPPED"},
		{"null config", `{"name":"null-config","config":null}`, 400, "Connector config must not be null"},
		{"name mismatch", map[string]any{"name": "mismatch", "config": cfgWith(gen, "name", "other")},
			400, "Connector name configuration (other) doesn't match connector name in the URL (mismatch)"},
		{"no connector.class", map[string]any{"name": "no-class", "config": cfgOf("topic", "t", "file", "in.txt")},
			400, "Connector config contains no connector type"},
		{"file source without file", map[string]any{"name": "no-file", "config": cfgOf("connector.class", "FileStreamSource", "topic", topic)},
			400, validationMessage(missingFile)},
		{"empty name", map[string]any{"name": "", "config": gen},
			400, validationMessage("Invalid value  for configuration name: String may not be empty")},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			before := listNames(c)
			wantError(t, c.Do("POST", "/connectors", tt.body), tt.status, tt.msg)
			if after := listNames(c); !slices.Equal(before, after) {
				t.Errorf("connectors changed from %v to %v: a bad create must create nothing", before, after)
			}
		})
	}

	t.Run("unknown class", func(t *testing.T) {
		r := c.Do("POST", "/connectors", map[string]any{"name": "unknown-class", "config": cfgOf("connector.class", "com.example.Nope", "topic", "t")})
		const prefix = "Failed to find any class that implements Connector and which name matches com.example.Nope, available connectors are: "
		if r.Status != 400 || !strings.HasPrefix(r.Message(), prefix) || !strings.Contains(r.Message(), classGenerator) {
			t.Fatalf("got %s", r)
		}
		wantError(t, c.Do("GET", "/connectors/unknown-class", nil), 404, "Connector unknown-class not found")
	})

	t.Run("duplicate", func(t *testing.T) {
		wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "default-state", "config": gen}),
			409, "Connector default-state already exists")
		// Validation runs before the existence check.
		wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "default-state",
			"config": cfgOf("connector.class", "FileStreamSource", "topic", topic)}), 400, validationMessage(missingFile))
		// The duplicate changed nothing: still the generator, still running.
		var cfg map[string]string
		c.Must(200, "GET", "/connectors/default-state/config", nil).JSON(t, &cfg)
		if cfg["connector.class"] != classGenerator {
			t.Errorf("config after duplicate create: %v", cfg)
		}
	})
}

func listNames(c *sluicetest.Cluster) []string {
	var names []string
	c.Must(http.StatusOK, "GET", "/connectors", nil).JSON(c.T, &names)
	slices.Sort(names)
	return names
}

func TestEndpointsListExpand(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	wantJSON(t, c.Do("GET", "/connectors", nil), 200, `[]`)
	gen := generatorCfg(c.Name("list"))
	mustCreate(c, "a", gen, "")
	mustCreate(c, "b", gen, "STOPPED")
	c.WaitState("a", "RUNNING", 1, "RUNNING")
	c.WaitState("b", "STOPPED", 0, "")
	w := workerID(c)

	if got := listNames(c); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("GET /connectors = %v", got)
	}
	infoA := `{"name":"a","config":` + configJSON(cfgWith(gen, "name", "a")) + `,"tasks":[{"connector":"a","task":0}],"type":"source"}`
	infoB := `{"name":"b","config":` + configJSON(cfgWith(gen, "name", "b")) + `,"tasks":[],"type":"source"}`
	statusB := `{"name":"b","connector":{"state":"STOPPED","version":"0.1.0","worker_id":"` + w + `"},"tasks":[],"type":"source"}`
	statusA := func(t *testing.T) string {
		s, _ := c.Status("a")
		return `{"name":"a","connector":{"state":"RUNNING","version":"0.1.0","worker_id":"` + w + `"},"tasks":[{"id":0,"state":"RUNNING","version":"0.1.0","worker_id":"` +
			s.Tasks[0].WorkerID + `"}],"type":"source"}`
	}
	tests := []struct {
		query string
		want  func(t *testing.T) string
	}{
		{"?expand=info", func(*testing.T) string { return `{"a":{"info":` + infoA + `},"b":{"info":` + infoB + `}}` }},
		{"?expand=status", func(t *testing.T) string {
			return `{"a":{"status":` + statusA(t) + `},"b":{"status":` + statusB + `}}`
		}},
		{"?expand=status&expand=info", func(t *testing.T) string {
			return `{"a":{"status":` + statusA(t) + `,"info":` + infoA + `},"b":{"status":` + statusB + `,"info":` + infoB + `}}`
		}},
		{"?expand=bogus", func(*testing.T) string { return `{"a":{},"b":{}}` }},
		{"?expand=bogus&expand=info", func(*testing.T) string { return `{"a":{"info":` + infoA + `},"b":{"info":` + infoB + `}}` }},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantJSON(t, c.Do("GET", "/connectors"+tt.query, nil), 200, tt.want(t))
		})
	}
}

func configJSON(m map[string]string) string { b, _ := json.Marshal(m); return string(b) }

func TestEndpointsConfig(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("config")
	gen := generatorCfg(topic)

	t.Run("PUT creates with 201 and Location", func(t *testing.T) {
		r := c.Do("PUT", "/connectors/p/config", gen)
		if loc := r.Header.Get("Location"); loc != c.URL+"/connectors/p" {
			t.Errorf("Location = %q", loc)
		}
		wantJSON(t, r, 201, `{"name":"p","config":`+configJSON(cfgWith(gen, "name", "p"))+`,"tasks":[],"type":"source"}`)
		c.WaitState("p", "RUNNING", 1, "RUNNING")
	})
	t.Run("PUT replaces with 200 and coerces values to strings", func(t *testing.T) {
		r := c.Do("PUT", "/connectors/p/config", map[string]any{"connector.class": classGenerator, "topic": topic,
			"rate": 20, "tasks.max": 1, "errors.log.enable": false})
		if r.Status != 200 || r.Header.Get("Location") != "" {
			t.Fatalf("got %s (Location %q), want 200 without Location", r, r.Header.Get("Location"))
		}
		want := `{"connector.class":"` + classGenerator + `","topic":"` + topic + `","rate":"20","tasks.max":"1","errors.log.enable":"false","name":"p"}`
		wantJSON(t, c.Do("GET", "/connectors/p/config", nil), 200, want)
	})
	t.Run("PATCH merges and null removes", func(t *testing.T) {
		r := c.Do("PATCH", "/connectors/p/config", map[string]any{"rate": "30", "errors.log.enable": nil, "record.bytes": "64"})
		var info struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
			Type   string            `json:"type"`
		}
		if r.Status != 200 {
			t.Fatalf("PATCH: %s", r)
		}
		r.JSON(t, &info)
		want := map[string]string{"connector.class": classGenerator, "topic": topic, "rate": "30", "tasks.max": "1", "record.bytes": "64", "name": "p"}
		if info.Name != "p" || info.Type != "source" || !mapsEqual(info.Config, want) {
			t.Fatalf("PATCH answered %s", r.Body)
		}
		wantJSON(t, c.Do("GET", "/connectors/p/config", nil), 200, configJSON(want))
	})
	t.Run("PUT keeps a STOPPED connector STOPPED", func(t *testing.T) {
		mustCreate(c, "s", gen, "STOPPED")
		c.WaitState("s", "STOPPED", 0, "")
		c.Must(200, "PUT", "/connectors/s/config", cfgWith(gen, "rate", "10"))
		c.Must(200, "PATCH", "/connectors/s/config", map[string]any{"rate": "11"})
		wantJSON(t, c.Do("GET", "/connectors/s/tasks", nil), 200, `[]`)
		st := c.WaitState("s", "STOPPED", 0, "")
		if st.Tasks == nil {
			t.Errorf("STOPPED status has tasks null, want []")
		}
	})
	t.Run("PUT keeps a PAUSED connector PAUSED", func(t *testing.T) {
		mustCreate(c, "pp", gen, "")
		c.WaitState("pp", "RUNNING", 1, "RUNNING")
		c.Must(202, "PUT", "/connectors/pp/pause", nil)
		c.WaitState("pp", "PAUSED", 1, "PAUSED")
		c.Must(200, "PUT", "/connectors/pp/config", cfgWith(gen, "rate", "10"))
		c.WaitState("pp", "PAUSED", 1, "PAUSED")
	})

	bad := []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"GET unknown", "GET", "/connectors/nope/config", nil, 404, "Connector nope not found"},
		{"PATCH unknown", "PATCH", "/connectors/nope/config", map[string]any{"rate": "1"}, 404, "Connector nope not found"},
		{"PUT name mismatch", "PUT", "/connectors/p/config", cfgWith(gen, "name", "q"), 400,
			"Connector name configuration (q) doesn't match connector name in the URL (p)"},
		{"PUT no connector.class", "PUT", "/connectors/p/config", cfgOf("topic", "x"), 400,
			"Connector config contains no connector type"},
		{"PUT invalid", "PUT", "/connectors/p/config", cfgOf("connector.class", "FileStreamSource", "topic", "x"), 400,
			validationMessage(missingFile)},
		{"PATCH invalid", "PATCH", "/connectors/p/config", map[string]any{"streams": "0"}, 400,
			validationMessage("Invalid value 0 for configuration streams: Value must be at least 1")},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			before := c.Must(200, "GET", "/connectors/p/config", nil).Body
			wantError(t, c.Do(tt.method, tt.path, tt.body), tt.status, tt.msg)
			if after := c.Must(200, "GET", "/connectors/p/config", nil).Body; string(after) != string(before) {
				t.Errorf("config changed by a failed request: %s -> %s", before, after)
			}
		})
	}
	t.Run("PATCH name is not checked against the URL, as in Kafka Connect 4.4", func(t *testing.T) {
		r := c.Must(200, "PATCH", "/connectors/p/config", map[string]any{"name": "q"})
		var info struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		r.JSON(t, &info)
		if info.Name != "p" || info.Config["name"] != "q" {
			t.Fatalf("got %s", r.Body)
		}
		c.Must(200, "PATCH", "/connectors/p/config", map[string]any{"name": "p"})
	})
	t.Run("PUT unknown class", func(t *testing.T) {
		r := c.Do("PUT", "/connectors/newone/config", cfgOf("connector.class", "Nope"))
		if r.Status != 400 || !strings.HasPrefix(r.Message(), "Failed to find any class that implements Connector and which name matches Nope, available connectors are: ") {
			t.Fatalf("got %s", r)
		}
		wantError(t, c.Do("GET", "/connectors/newone/config", nil), 404, "Connector newone not found")
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestEndpointsStatusAndTasks(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("status-data") // not <prefix>-status: that is the cluster's status topic
	gen := generatorCfg(topic, "streams", "2", "tasks.max", "2")
	mustCreate(c, "g", gen, "")
	st := c.WaitState("g", "RUNNING", 2, "RUNNING")
	w := workerID(c)

	t.Run("status", func(t *testing.T) {
		r := c.Must(200, "GET", "/connectors/g/status", nil)
		if strings.Contains(string(r.Body), "trace") {
			t.Errorf("a healthy status has no trace field: %s", r.Body)
		}
		want := `{"name":"g","connector":{"state":"RUNNING","version":"0.1.0","worker_id":"` + w + `"},"tasks":[` +
			`{"id":0,"state":"RUNNING","version":"0.1.0","worker_id":"` + st.Tasks[0].WorkerID + `"},` +
			`{"id":1,"state":"RUNNING","version":"0.1.0","worker_id":"` + st.Tasks[1].WorkerID + `"}],"type":"source"}`
		wantJSON(t, r, 200, want)
		for _, ts := range st.Tasks {
			if ts.WorkerID != "agent-1" && ts.WorkerID != "agent-2" {
				t.Errorf("task %d worker_id %q, want an agent id", ts.ID, ts.WorkerID)
			}
		}
		// Placement spreads the two tasks over the two agents.
		if st.Tasks[0].WorkerID == st.Tasks[1].WorkerID {
			t.Errorf("both tasks on %s", st.Tasks[0].WorkerID)
		}
	})
	t.Run("task status", func(t *testing.T) {
		wantJSON(t, c.Do("GET", "/connectors/g/tasks/1/status", nil), 200,
			`{"id":1,"state":"RUNNING","version":"0.1.0","worker_id":"`+st.Tasks[1].WorkerID+`"}`)
	})
	t.Run("tasks", func(t *testing.T) {
		var tasks []struct {
			ID     map[string]any    `json:"id"`
			Config map[string]string `json:"config"`
		}
		c.Must(200, "GET", "/connectors/g/tasks", nil).JSON(t, &tasks)
		if len(tasks) != 2 {
			t.Fatalf("tasks: %+v", tasks)
		}
		for i, ti := range tasks {
			if len(ti.ID) != 2 || ti.ID["connector"] != "g" || ti.ID["task"] != json.Number(itoa10(i)) || ti.Config["topic"] != topic {
				t.Errorf("task %d: %+v", i, ti)
			}
		}
	})
	t.Run("connector info", func(t *testing.T) {
		wantJSON(t, c.Do("GET", "/connectors/g", nil), 200, `{"name":"g","config":`+configJSON(cfgWith(gen, "name", "g"))+
			`,"tasks":[{"connector":"g","task":0},{"connector":"g","task":1}],"type":"source"}`)
	})
	t.Run("STOPPED shape", func(t *testing.T) {
		mustCreate(c, "st", gen, "STOPPED")
		want := `{"name":"st","connector":{"state":"STOPPED","version":"0.1.0","worker_id":"` + w + `"},"tasks":[],"type":"source"}`
		sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
			r := c.Do("GET", "/connectors/st/status", nil)
			return r.Status == 200 && jsonEqual(r.Body, want), r.String()
		})
		wantJSON(t, c.Do("GET", "/connectors/st/tasks", nil), 200, `[]`)
		wantJSON(t, c.Do("GET", "/connectors/st", nil), 200, `{"name":"st","config":`+configJSON(cfgWith(gen, "name", "st"))+`,"tasks":[],"type":"source"}`)
	})
	t.Run("sink type", func(t *testing.T) {
		sink := c.Name("sink")
		mustCreate(c, sink, fileSinkCfg("out.txt", topic), "")
		st := c.WaitState(sink, "RUNNING", 1, "RUNNING")
		if st.Type != "sink" {
			t.Errorf("sink status type %q", st.Type)
		}
	})

	notFound := []struct{ path, msg string }{
		{"/connectors/nope/status", "No status found for connector nope"},
		{"/connectors/nope/tasks/0/status", "No status found for task nope-0"},
		{"/connectors/g/tasks/7/status", "No status found for task g-7"},
		{"/connectors/nope/tasks", "Connector nope not found"},
		{"/connectors/nope", "Connector nope not found"},
	}
	for _, tt := range notFound {
		t.Run("404 "+tt.path, func(t *testing.T) { wantError(t, c.Do("GET", tt.path, nil), 404, tt.msg) })
	}
}

func jsonEqual(got []byte, want string) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	a, _ := json.Marshal(g)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}

func TestEndpointsRestart(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen := generatorCfg(c.Name("restart"))
	mustCreate(c, "r", gen, "")
	st := c.WaitState("r", "RUNNING", 1, "RUNNING")
	w, agentW := workerID(c), st.Tasks[0].WorkerID
	running := `{"name":"r","connector":{"state":"RUNNING","version":"0.1.0","worker_id":"` + w + `"},"tasks":[{"id":0,"state":"RUNNING","version":"0.1.0","worker_id":"` + agentW + `"}],"type":"source"}`
	restarting := `{"name":"r","connector":{"state":"RESTARTING","version":"0.1.0","worker_id":"` + w + `"},"tasks":[{"id":0,"state":"RESTARTING","version":"0.1.0","worker_id":"` + agentW + `"}],"type":"source"}`

	tests := []struct {
		query       string
		status      int
		body        string // for 202
		taskRestart bool
	}{
		{"", 204, "", false},
		{"?includeTasks=false&onlyFailed=false", 204, "", false},
		{"?includeTasks=yes", 204, "", false}, // only a case-insensitive "true" is true
		{"?onlyFailed=true", 202, running, false},
		{"?includeTasks=true&onlyFailed=true", 202, running, false},
		{"?onlyFailed=TRUE&includeTasks=false", 202, running, false},
		{"?includeTasks=false&onlyFailed=false&x=1", 204, "", false},
		{"?includeTasks=True", 202, restarting, true},
	}
	for _, tt := range tests {
		t.Run("restart"+tt.query, func(t *testing.T) {
			c.WaitState("r", "RUNNING", 1, "RUNNING")
			before := maxGen(taskGenerations(c, "r")[0])
			r := c.Do("POST", "/connectors/r/restart"+tt.query, nil)
			if tt.status == 204 {
				wantNoBody(t, r, 204)
			} else {
				wantJSON(t, r, 202, tt.body)
			}
			c.WaitState("r", "RUNNING", 1, "RUNNING")
			if tt.taskRestart {
				sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
					g := maxGen(taskGenerations(c, "r")[0])
					return g > before, "task 0 not restarted: generation still " + itoa10(int(g))
				})
			} else if after := maxGen(taskGenerations(c, "r")[0]); after != before {
				t.Errorf("task restarted (generation %d -> %d)", before, after)
			}
		})
	}
	t.Run("task restart", func(t *testing.T) {
		before := maxGen(taskGenerations(c, "r")[0])
		wantNoBody(t, c.Do("POST", "/connectors/r/tasks/0/restart", nil), 204)
		sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
			g := maxGen(taskGenerations(c, "r")[0])
			return g > before, "task 0 not restarted"
		})
		c.WaitState("r", "RUNNING", 1, "RUNNING")
	})
	t.Run("STOPPED stays STOPPED", func(t *testing.T) {
		mustCreate(c, "rs", gen, "STOPPED")
		c.WaitState("rs", "STOPPED", 0, "")
		wantNoBody(t, c.Do("POST", "/connectors/rs/restart", nil), 204)
		c.WaitState("rs", "STOPPED", 0, "")
		r := c.Do("POST", "/connectors/rs/restart?includeTasks=true", nil)
		if r.Status != 202 {
			t.Fatalf("got %s", r)
		}
		c.WaitState("rs", "STOPPED", 0, "")
	})

	errs := []struct{ path, msg string }{
		{"/connectors/nope/restart", "Unknown connector: nope"},
		{"/connectors/nope/restart?includeTasks=true", "Unknown connector: nope"},
		{"/connectors/nope/restart?onlyFailed=true", "Unknown connector: nope"},
		{"/connectors/nope/tasks/0/restart", "Unknown connector: nope"},
		{"/connectors/r/tasks/5/restart", "Unknown task: r-5"},
		{"/connectors/rs/tasks/0/restart", "Unknown task: rs-0"},
	}
	for _, tt := range errs {
		t.Run("404 "+tt.path, func(t *testing.T) { wantError(t, c.Do("POST", tt.path, nil), 404, tt.msg) })
	}
}

func TestEndpointsDelete(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen := generatorCfg(c.Name("delete"))
	for _, tt := range []struct{ name, initial string }{{"running", ""}, {"paused", "PAUSED"}, {"stopped", "STOPPED"}} {
		t.Run(tt.name, func(t *testing.T) {
			mustCreate(c, tt.name, gen, tt.initial)
			sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
				_, ok := c.Status(tt.name)
				return ok, "no status yet"
			})
			if tt.initial == "" {
				c.WaitState(tt.name, "RUNNING", 1, "RUNNING")
			}
			wantNoBody(t, c.Do("DELETE", "/connectors/"+tt.name, nil), 204)
			wantError(t, c.Do("GET", "/connectors/"+tt.name, nil), 404, "Connector "+tt.name+" not found")
			wantError(t, c.Do("DELETE", "/connectors/"+tt.name, nil), 404, "Connector "+tt.name+" not found")
			if slices.Contains(listNames(c), tt.name) {
				t.Errorf("%s still listed", tt.name)
			}
			sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
				r := c.Do("GET", "/connectors/"+tt.name+"/status", nil)
				t0 := c.Do("GET", "/connectors/"+tt.name+"/tasks/0/status", nil)
				return r.Status == 404 && r.Message() == "No status found for connector "+tt.name && t0.Status == 404,
					r.String() + " / " + t0.String()
			})
		})
	}
	t.Run("re-create after delete", func(t *testing.T) {
		mustCreate(c, "running", gen, "")
		c.WaitState("running", "RUNNING", 1, "RUNNING")
	})
}

func TestEndpointsTopics(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("topics")
	writeLines(t, c.WorkDir+"/in.txt", numbered(0, 5))
	mustCreate(c, "src", fileSourceCfg("in.txt", topic), "")
	sink := c.Name("sink") // unique: its group must not meet another test's on a shared Kafka
	mustCreate(c, sink, fileSinkCfg("out.txt", topic), "")
	waitFile(t, c.WorkDir+"/out.txt", numbered(0, 5))

	for _, name := range []string{"src", sink} {
		t.Run(name, func(t *testing.T) {
			want := `{"` + name + `":{"topics":["` + topic + `"]}}`
			sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
				r := c.Do("GET", "/connectors/"+name+"/topics", nil)
				return r.Status == 200 && jsonEqual(r.Body, want), r.String()
			})
			wantNoBody(t, c.Do("PUT", "/connectors/"+name+"/topics/reset", nil), 202)
			wantJSON(t, c.Do("GET", "/connectors/"+name+"/topics", nil), 200, `{"`+name+`":{"topics":[]}}`)
		})
	}
	t.Run("a stopped connector's topics", func(t *testing.T) {
		mustCreate(c, "fresh", generatorCfg(c.Name("fresh")), "STOPPED")
		wantJSON(t, c.Do("GET", "/connectors/fresh/topics", nil), 200, `{"fresh":{"topics":[]}}`)
	})
	t.Run("404", func(t *testing.T) {
		// Kafka Connect 4.4 answers the topics of any name, known or not.
		if r := c.Must(200, "GET", "/connectors/nope/topics", nil); strings.TrimSpace(string(r.Body)) != `{"nope":{"topics":[]}}` {
			t.Errorf("topics of an unknown connector: %s", r.Body)
		}
		c.Must(202, "PUT", "/connectors/nope/topics/reset", nil)
	})
}

func TestEndpointsPlugins(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	type plugin struct {
		Class   string `json:"class"`
		Type    string `json:"type"`
		Version string `json:"version"`
	}
	index := func(ps []plugin) map[string]plugin {
		out := map[string]plugin{}
		for _, p := range ps {
			if _, dup := out[p.Class]; dup {
				t.Errorf("%s listed twice", p.Class)
			}
			out[p.Class] = p
		}
		return out
	}

	t.Run("connectors only", func(t *testing.T) {
		var ps []plugin
		c.Must(200, "GET", "/connector-plugins", nil).JSON(t, &ps)
		got := index(ps)
		for class, typ := range map[string]string{classFileSource: "source", classFileSink: "sink", classGenerator: "source"} {
			if p, ok := got[class]; !ok || p.Type != typ || p.Version == "" {
				t.Errorf("%s: %+v (listed: %v)", class, p, ps)
			}
		}
		for _, p := range ps {
			if p.Type != "source" && p.Type != "sink" {
				t.Errorf("non-connector plugin listed: %+v", p)
			}
		}
		var same []plugin
		c.Must(200, "GET", "/connector-plugins?connectorsOnly=true", nil).JSON(t, &same)
		if len(same) != len(ps) {
			t.Errorf("connectorsOnly=true lists %d, default %d", len(same), len(ps))
		}
	})
	t.Run("connectorsOnly=false", func(t *testing.T) {
		var ps []plugin
		c.Must(200, "GET", "/connector-plugins?connectorsOnly=false", nil).JSON(t, &ps)
		got := index(ps)
		for class, typ := range map[string]string{classFileSource: "source", classFileSink: "sink", classGenerator: "source",
			classJSONConverter: "converter", classStringConverter: "converter", classBytesConverter: "converter"} {
			if p, ok := got[class]; !ok || p.Type != typ {
				t.Errorf("%s: %+v", class, p)
			}
		}
	})
	for _, name := range []string{classFileSource, "FileStreamSource", "FileStreamSourceConnector"} {
		t.Run("config of "+name, func(t *testing.T) {
			var defs []map[string]any
			c.Must(200, "GET", "/connector-plugins/"+name+"/config", nil).JSON(t, &defs)
			byName := map[string]map[string]any{}
			for _, d := range defs {
				byName[d["name"].(string)] = d
				for _, k := range []string{"name", "type", "required", "default_value", "importance", "documentation", "group", "order_in_group", "width", "display_name", "dependents"} {
					if _, ok := d[k]; !ok {
						t.Errorf("definition %v lacks %q", d["name"], k)
					}
				}
			}
			if byName["file"] == nil || byName["topic"] == nil || byName["batch.size"]["default_value"] != "2000" {
				t.Errorf("file source definitions: %v", defs)
			}
		})
	}
	t.Run("config of an unknown plugin", func(t *testing.T) {
		wantError(t, c.Do("GET", "/connector-plugins/Nope/config", nil), 404, "Unknown plugin Nope.")
	})
}

func TestEndpointsValidate(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	type value struct {
		Name   string   `json:"name"`
		Errors []string `json:"errors"`
	}
	type infos struct {
		Name       string   `json:"name"`
		ErrorCount int      `json:"error_count"`
		Groups     []string `json:"groups"`
		Configs    []struct {
			Value value `json:"value"`
		} `json:"configs"`
	}
	errorsOf := func(in infos) map[string][]string {
		out := map[string][]string{}
		for _, cv := range in.Configs {
			if len(cv.Value.Errors) > 0 {
				out[cv.Value.Name] = cv.Value.Errors
			}
		}
		return out
	}

	ok := []struct {
		name, plugin string
		config       map[string]string
		class        string
		errors       map[string][]string
	}{
		{"missing file", "FileStreamSource", cfgOf("connector.class", "FileStreamSource", "name", "v", "topic", "t"), "FileStreamSource",
			map[string][]string{"file": {missingFile}}},
		{"valid", "FileStreamSourceConnector", cfgOf("connector.class", classFileSource, "name", "v", "topic", "t", "file", "in.txt"), classFileSource, nil},
		{"generator streams 0", "GeneratorSource", cfgOf("connector.class", classGenerator, "name", "v", "topic", "t", "streams", "0"), classGenerator,
			map[string][]string{"streams": {"Invalid value 0 for configuration streams: Value must be at least 1"}}},
		{"valid sink", "FileStreamSink", cfgOf("connector.class", "FileStreamSink", "name", "v", "file", "o.txt", "topics", "t"), "FileStreamSink", nil},
		{"no name", "FileStreamSink", cfgOf("connector.class", "FileStreamSink", "file", "o.txt", "topics", "t"), "FileStreamSink",
			map[string][]string{"name": {`Missing required configuration "name" which has no default value.`}}},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			var got infos
			c.Must(200, "PUT", "/connector-plugins/"+tt.plugin+"/config/validate", tt.config).JSON(t, &got)
			errs := errorsOf(got)
			if got.Name != tt.class || got.ErrorCount != len(errs) || len(errs) != len(tt.errors) || len(got.Groups) == 0 {
				t.Fatalf("validate: name %q, error_count %d, errors %v, groups %v", got.Name, got.ErrorCount, errs, got.Groups)
			}
			for k, want := range tt.errors {
				if !slices.Equal(errs[k], want) {
					t.Errorf("errors of %s: %q, want %q", k, errs[k], want)
				}
			}
		})
	}

	bad := []struct {
		name, plugin string
		config       map[string]string
		msg          string
	}{
		{"type mismatch", "FileStreamSource", cfgOf("connector.class", "FileStreamSinkConnector", "topics", "t"),
			"Included connector type FileStreamSinkConnector does not match request type FileStreamSource"},
		{"alias vs full name", classFileSource, cfgOf("connector.class", "FileStreamSource", "topic", "t"),
			"Included connector type FileStreamSource does not match request type " + classFileSource},
		{"no connector.class", "FileStreamSource", cfgOf("topic", "t"),
			"Connector config contains no connector type"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, c.Do("PUT", "/connector-plugins/"+tt.plugin+"/config/validate", tt.config), 400, tt.msg)
		})
	}
}

package plugins

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// sourceOffset is one entry of GET /connectors/{name}/offsets: a source
// partition and its offset, in the connector's own JSON.
type sourceOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// connectorOffsets reads a connector's offsets as GET
// /connectors/{name}/offsets lists them now; numbers keep their JSON text
// (json.Number), so a Kafka offset is read exactly. It returns nil with the
// body when the request did not succeed or the body did not parse, for a
// caller polling until the offsets show.
func connectorOffsets(c sluice, name string) ([]sourceOffset, string) {
	r := c.Do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	var body struct {
		Offsets []sourceOffset `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if r.Status != http.StatusOK || dec.Decode(&body) != nil {
		return nil, r.String()
	}
	return body.Offsets, string(r.Body)
}

// validateErrors asks the validate endpoint about config (200), and returns
// its error count and the errors of each key that has some.
func validateErrors(t *testing.T, c sluice, plugin string, config map[string]string) (int, map[string][]string) {
	t.Helper()
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	c.Must(http.StatusOK, "PUT", "/connector-plugins/"+plugin+"/config/validate", config).JSON(t, &infos)
	errs := map[string][]string{}
	for _, ci := range infos.Configs {
		if len(ci.Value.Errors) > 0 {
			errs[ci.Value.Name] = ci.Value.Errors
		}
	}
	return infos.ErrorCount, errs
}

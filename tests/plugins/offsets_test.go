package plugins

import (
	"bytes"
	"encoding/json"
	"net/http"
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

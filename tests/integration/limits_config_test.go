package integration

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// configRecordLimit is the largest config record (key and value) the
// config topic takes on the test broker: the smaller of its
// max.message.bytes (1048588 by default) and the leader producer's batch
// limit (1000012), less 160 bytes of record framing (its signature header
// included).
const configRecordLimit = 1000012 - 160

var tooLargeConfig = regexp.MustCompile(`^Connector configuration is too large: its record in the config topic would be (\d+) bytes, over the topic's limit of (\d+) bytes$`)

// wantConfigTooLarge checks a 413 naming the config topic's limit.
func wantConfigTooLarge(t testing.TB, r sluicetest.Response) {
	t.Helper()
	m := tooLargeConfig.FindStringSubmatch(r.Message())
	if r.Status != http.StatusRequestEntityTooLarge || m == nil || m[2] != strconv.Itoa(configRecordLimit) || !strings.Contains(string(r.Body), `"error_code":413`) {
		t.Fatalf("got %s, want 413 naming the limit of %d bytes", r, configRecordLimit)
	}
	if n, _ := strconv.Atoi(m[1]); n <= configRecordLimit {
		t.Fatalf("record of %d bytes refused, below the limit of %d", n, configRecordLimit)
	}
}

// TestConfigSizeLimit: a connector config whose record would exceed what
// the config topic takes is refused with a 413 naming the limit — on
// create, with initial offsets, and on PUT and PATCH …/config — before
// anything is written; a config just under the limit is stored whole.
func TestConfigSizeLimit(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("big")
	src := fileSourceCfg("big.txt", topic)
	huge := strings.Repeat("x", 1_100_000)
	big := cfgWith(src, "padding", huge)

	t.Run("create", func(t *testing.T) {
		wantConfigTooLarge(t, c.Do("POST", "/connectors", map[string]any{"name": "big", "config": big}))
		expect(t, c, "GET", "/connectors/big", nil, http.StatusNotFound, msgNotFound("big"))
	})
	t.Run("create with initial offsets", func(t *testing.T) {
		c := on(c, t)
		fileSource(c, "seeded", "big.txt", topic, "STOPPED")
		patch(t, c, "seeded", body(filePos("big.txt", 5)), http.StatusOK, msgAlterDefinite)
		c.Must(http.StatusNoContent, "DELETE", "/connectors/seeded", nil)
		wantConfigTooLarge(t, c.Do("POST", "/connectors", map[string]any{"name": "seeded", "config": big,
			"initial_offsets": []offset{filePos("big.txt", 9)}}))
		expect(t, c, "GET", "/connectors/seeded", nil, http.StatusNotFound, msgNotFound("seeded"))
		// Nothing changed: a new connector of that name resumes from 5.
		fileSource(c, "seeded", "big.txt", topic, "STOPPED")
		wantOffsets(c, "seeded", []offset{filePos("big.txt", 5)})
	})
	t.Run("PUT and PATCH config", func(t *testing.T) {
		c := on(c, t)
		fileSource(c, "small", "big.txt", topic, "STOPPED")
		wantConfigTooLarge(t, c.Do("PUT", "/connectors/small/config", big))
		wantConfigTooLarge(t, c.Do("PATCH", "/connectors/small/config", map[string]any{"padding": huge}))
		wantConfigTooLarge(t, c.Do("PUT", "/connectors/new-by-put/config", big))
		var cfg map[string]string
		c.Must(http.StatusOK, "GET", "/connectors/small/config", nil).JSON(t, &cfg)
		if _, ok := cfg["padding"]; ok {
			t.Fatal("a refused config change was stored")
		}
		expect(t, c, "GET", "/connectors/new-by-put", nil, http.StatusNotFound, msgNotFound("new-by-put"))
	})
	t.Run("just under the limit", func(t *testing.T) {
		c := on(c, t)
		fits := cfgWith(src, "padding", strings.Repeat("y", configRecordLimit-2000))
		mustCreate(c, "fits", fits, "STOPPED")
		var cfg map[string]string
		c.Must(http.StatusOK, "GET", "/connectors/fits/config", nil).JSON(t, &cfg)
		if len(cfg["padding"]) != len(fits["padding"]) {
			t.Fatalf("stored padding of %d bytes, want %d", len(cfg["padding"]), len(fits["padding"]))
		}
	})
}

package coordinator

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/coordinator/internal/tenants"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// TestHerderConfigFillsEveryField: with every setting and part given,
// herderConfig leaves no field of herder.Config at its zero value, so a
// field added to the herder's config and forgotten here fails this test
// rather than running with a zero.
func TestHerderConfigFillsEveryField(t *testing.T) {
	cfg := validConfig()
	cfg.AgentProbe = time.Second
	cfg.PlacementSettle = time.Second
	cfg.DisableInternalTopicCreation = true
	cfg.ExactlyOnce = true
	cfg.SinkLagDegraded = 5000
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The parts New leaves out without their files, and Start makes.
	c.tenants = &tenants.Tenants{}
	c.signing = &recordsig.Gate{}
	c.leaderSigner, c.leaderTrust = &leasetrust.Signer{}, &leasetrust.Trust{}
	c.history = &offsethistory.Log{}
	c.configHistory = &confighistory.Log{}
	hc := c.herderConfig("127.0.0.1:8083", natsconn.Auth{}, []kgo.Opt{kgo.ClientID(kafkaClientID)})
	v := reflect.ValueOf(hc)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("herder.Config.%s is not set by herderConfig", v.Type().Field(i).Name)
		}
	}
}

package herder

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// markSigning records where the signing of the coordinators' records
// began, when this leader signs and no leader recorded it before: the end
// of each signed topic now, so that what the version before wrote there is
// still taken and everything after must be signed. The config topic's own
// boundary is the marker record itself. It runs once per cluster, when
// the first leader with a key takes over — an upgrade, or a new cluster.
func (h *Herder) markSigning(ctx context.Context) error {
	if h.cfg.Signing == nil || h.cfg.Signing.Known() {
		return nil
	}
	since := recordsig.Since{}
	ends, err := h.admin.ListEndOffsets(ctx, h.cfg.SignedTopics...)
	if err != nil {
		return fmt.Errorf("record signing: read the ends of %v: %w", h.cfg.SignedTopics, err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			// A topic not created yet has no record to take unsigned.
			return
		}
		if since[o.Topic] == nil {
			since[o.Topic] = map[int32]int64{}
		}
		since[o.Topic][o.Partition] = o.Offset
	})
	if err := h.configs.Apply(ctx, store.MarkSigning{Since: since}); err != nil {
		return fmt.Errorf("record signing: write the marker: %w", err)
	}
	h.log.Info("the coordinators' records are signed from here on; records written before are still taken", "since", since)
	return nil
}

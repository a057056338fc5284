package herder

import (
	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
)

// alterOffsetsHook asks the connector's OffsetAlterer, if it has one, about
// an offsets change, on its config with the config providers' placeholders
// resolved (Kafka Connect's worker hands alterOffsets the transformed
// config too). A refusal, or a placeholder that cannot be resolved, is a
// 400 with its message; definite reports the connector acknowledged the
// change itself.
func (h *Herder) alterOffsetsHook(plugin *connect.Plugin, config map[string]string, offsets []connect.Offset) (definite bool, err error) {
	hook, ok := plugin.NewConnector().(connect.OffsetAlterer)
	if !ok {
		return false, nil
	}
	resolved, err := h.cfg.Providers.Transform(config)
	if err != nil {
		return false, v1.Errorf(v1.CodeBadRequest, "%s", err.Error())
	}
	if definite, err = hook.AlterOffsets(resolved, offsets); err != nil {
		return false, v1.Errorf(v1.CodeBadRequest, "%s", err.Error())
	}
	return definite, nil
}

package herder

// ConnectorState is a connector's config and stored target state as this
// coordinator's config store holds them, for the audit records of REST
// writes; ok is false when the connector does not exist, and before the
// config topic was first read.
func (h *Herder) ConnectorState(name string) (config map[string]string, targetState string, ok bool) {
	if !h.ready.Load() {
		return nil, "", false
	}
	c, ok := h.configs.State.Get(name)
	if !ok {
		return nil, "", false
	}
	return c.Config, c.TargetState, true // Get copies
}

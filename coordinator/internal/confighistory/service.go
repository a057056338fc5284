package confighistory

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-io/sluice/api"
)

// Reader reads the history (Log).
type Reader interface {
	List(ctx context.Context, connector string, limit int, before string) (api.ConfigHistory, error)
	Get(ctx context.Context, connector, id string) (api.ConfigHistoryEntry, bool, error)
}

// Writer writes a connector's config as PUT /connectors/{name}/config
// does (connectors.Service): validation, tenancy, size, the connector's
// lock and the config topic.
type Writer interface {
	PutConnectorConfig(ctx context.Context, name string, config map[string]string) (api.ConnectorInfo, bool, error)
}

// Store is the history as the herder is given it: written by the
// recorder, read by the service, its ids observed as a term begins (Log).
type Store interface {
	Appender
	Reader
	ObserveNewest(ctx context.Context) error
}

// Service answers the config history routes.
type Service struct {
	log     Reader
	configs Configs
	writer  Writer
}

// NewService makes the REST face of the history; with a nil log, every
// route answers that the history is off.
func NewService(log Reader, configs Configs, writer Writer) *Service {
	return &Service{log: log, configs: configs, writer: writer}
}

// errOff answers the routes of a coordinator without a config history.
var errOff = api.Errorf(api.CodeNotFound, "The config history is off on this coordinator")

// ConfigHistory answers GET /sluice/connectors/{name}/config/history: a
// 404 for a name that is no connector and has no history.
func (s *Service) ConfigHistory(ctx context.Context, name string, limit int, before string) (api.ConfigHistory, error) {
	if s.log == nil {
		return api.ConfigHistory{}, errOff
	}
	h, err := s.log.List(ctx, name, limit, before)
	if err != nil {
		return api.ConfigHistory{}, api.Errorf(api.CodeInternal, "Failed to read the config history of connector %s: %v", name, err)
	}
	if _, ok := s.configs.Get(name); !ok && len(h.Entries) == 0 && before == "" {
		return api.ConfigHistory{}, api.Errorf(api.CodeNotFound, "Connector %s not found, and the config history holds no entry of it", name)
	}
	return h, nil
}

// ConfigHistoryEntry answers GET …/config/history/{id}.
func (s *Service) ConfigHistoryEntry(ctx context.Context, name, id string) (api.ConfigHistoryEntry, error) {
	if s.log == nil {
		return api.ConfigHistoryEntry{}, errOff
	}
	e, ok, err := s.log.Get(ctx, name, id)
	switch {
	case err != nil:
		return api.ConfigHistoryEntry{}, api.Errorf(api.CodeInternal, "Failed to read the config history of connector %s: %v", name, err)
	case !ok:
		return api.ConfigHistoryEntry{}, entryNotFound(name, id)
	}
	return e, nil
}

func entryNotFound(name, id string) error {
	return api.Errorf(api.CodeNotFound, "Config history entry %s of connector %s not found (the history keeps the newest %d entries of each connector)", id, name, MaxPerConnector)
}

// RestoreConfig answers POST …/config/history/{id}/restore: the config
// entry id wrote (its After) is written again through PUT …/config's path,
// so it is validated and admitted as a PUT is, and recorded as a restore.
// A secret key whose value the history does not keep keeps the connector's
// current value; a restore that would need one the connector no longer
// has, or of an entry that wrote no config (a delete), is a 409.
func (s *Service) RestoreConfig(ctx context.Context, name, id string) (api.ConfigRestoreResult, error) {
	e, err := s.ConfigHistoryEntry(ctx, name, id)
	if err != nil {
		return api.ConfigRestoreResult{}, err
	}
	if e.After == nil {
		if e.Omitted {
			return api.ConfigRestoreResult{}, api.Errorf(api.CodeConflict, "Config history entry %s of connector %s cannot be restored: its config was too large for the history to keep", id, name)
		}
		return api.ConfigRestoreResult{}, api.Errorf(api.CodeConflict, "Config history entry %s of connector %s removed the connector (%s) and wrote no config: restore an earlier entry", id, name, e.Operation)
	}
	var current map[string]string
	if c, ok := s.configs.Get(name); ok {
		current = c.Config
	}
	config, kept, missing := restoredConfig(e, current)
	if len(missing) > 0 {
		return api.ConfigRestoreResult{}, api.Errorf(api.CodeConflict, "Config history entry %s of connector %s cannot be restored: the history does not keep the secret value of %s, and the connector has no current value to keep; PUT the config with the value instead",
			id, name, strings.Join(missing, ", "))
	}
	ch := &Change{Operation: api.ConfigRestore, Detail: fmt.Sprintf("restored entry %s", id)}
	info, _, err := s.writer.PutConnectorConfig(WithChange(ctx, ch), name, config)
	if err != nil {
		return api.ConfigRestoreResult{}, err
	}
	out := api.ConfigRestoreResult{Connector: info, Restored: id, KeptCurrent: kept}
	if ids := ch.Recorded(); len(ids) > 0 {
		out.HistoryID = ids[len(ids)-1]
	}
	return out, nil
}

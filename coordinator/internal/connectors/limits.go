package connectors

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// shownNameRunes is how much of an overlong name or id an error shows: enough
// to recognise it, never the megabyte a client sent.
const shownNameRunes = 64

// CheckNewName refuses a name for a new connector that Sluice could create
// but not then serve: '.' and '..', which a URL path cannot address, and a
// name whose tasks' transactional ids would exceed what the Kafka client
// accepts (its tasks would fail at their first start). The message shows
// only the start of a long name.
func (a *Admission) CheckNewName(name string) error {
	if name == "." || name == ".." {
		return api.Errorf(api.CodeBadRequest, "Connector name '%s' is not allowed: '.' and '..' cannot be addressed in a URL", name)
	}
	if limit := records.MaxNameBytes(a.cfg.GroupID); len(name) > limit {
		return api.Errorf(api.CodeBadRequest, "Connector name '%s' is too long: %d bytes, and at most %d are allowed, so that the transactional ids of its tasks (<group.id>-<name>-<task>) stay within %d bytes",
			shorten(name), len(name), limit, records.MaxTransactionalIDBytes)
	}
	return nil
}

// checkGroupID refuses a sink config whose consumer group id (connect-<name>,
// or consumer.override.group.id) Kafka cannot hold.
func checkGroupID(name string, config map[string]string) error {
	if g := records.SinkGroupID(name, config); len(g) > records.MaxGroupIDBytes {
		return api.Errorf(api.CodeBadRequest, "The consumer group id '%s' of connector '%s' is too long: %d bytes, and Kafka allows at most %d",
			shorten(g), shorten(name), len(g), records.MaxGroupIDBytes)
	}
	return nil
}

// CheckConfigSize refuses, before anything changes, a config write whose
// record the config topic would refuse: the broker's answer, after the
// fact, was a 500 "MESSAGE_TOO_LARGE".
func (a *Admission) CheckConfigSize(ctx context.Context, cmd store.Command) error {
	err := a.cfg.Writer.Check(ctx, cmd)
	var tl *store.TooLargeError
	if errors.As(err, &tl) && tl.Key != "" {
		return api.Errorf(api.CodeTooLarge, "Connector configuration is too large: its record in the config topic would be %d bytes, over the topic's limit of %d bytes", tl.Bytes, tl.Limit)
	}
	if err != nil {
		return api.Errorf(api.CodeTooLarge, "Connector configuration is too large: %v", err)
	}
	return nil
}

// CheckTaskConfigs refuses task configs the config topic cannot take, so
// that the instances manager fails the connector with a trace saying why
// rather than publishing them: the reconcile loop would otherwise try, and
// fail, to write them on every pass.
func (a *Admission) CheckTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	if err := a.cfg.Writer.Check(ctx, store.PutTaskConfigs{Name: name, Tasks: tasks}); err != nil {
		return fmt.Errorf("The task configs of the connector cannot be stored: %w. Make them smaller: change the connector's config, or restart it, to compute them again", err)
	}
	return nil
}

// shorten returns s, or its first shownNameRunes runes and an ellipsis.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= shownNameRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == shownNameRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

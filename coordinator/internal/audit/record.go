// Package audit is the coordinator's audit trail of REST writes: it builds
// the record of one write, appends it to the audit topic without holding the
// answer back for long, and reads the topic back for GET /sluice/audit.
//
//	REST write ─► Build (mask passwords, REST target states) ─► Log.Write
//	                 produce, wait ≤ timeout ─► answer the client
//	                 not acked in time: delivered later, or counted and logged
//	GET /sluice/audit ─► ParseQuery ─► Log.Read: seek by time, read ≤ MaxScan, newest first
package audit

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/shared/records"
)

// Hidden is what a masked value reads, as Kafka Connect masks passwords.
const Hidden = connect.Hidden

// Anonymous is the principal of a request sent without credentials.
const Anonymous = "anonymous"

// UnknownOperation names a write that matched no route of the API.
const UnknownOperation = "unknown"

// Mask returns config with the values that must not be shown replaced by
// Hidden; it must not change config. connectorClass is config's
// connector.class.
type Mask func(connectorClass string, config map[string]string) map[string]string

// Snapshot is a connector's state as the config store holds it: the config
// and the target state as stored (STARTED, PAUSED, STOPPED).
type Snapshot struct {
	Config      map[string]string
	TargetState string
}

// Input is what one write's record is built from.
type Input struct {
	Time        time.Time
	Principal   string
	Source      string
	Coordinator string
	Operation   string
	Method      string
	Path        string
	Query       string
	Connector   string
	// Before and After are the connector's state before the request and
	// after its answer; nil when it did not exist.
	Before, After *Snapshot
	// Status and Body are the answer's; the message of an error body
	// becomes the record's Error.
	Status int
	Body   []byte
}

// Build makes the record of in. Configs go through mask (nil: shown as
// they are), target states get their REST names, and an empty principal or
// operation reads Anonymous or UnknownOperation.
func Build(in Input, mask Mask) api.AuditRecord {
	rec := api.AuditRecord{
		Time:        in.Time.UTC(),
		Principal:   in.Principal,
		Source:      in.Source,
		Coordinator: in.Coordinator,
		Operation:   in.Operation,
		Method:      in.Method,
		Path:        in.Path,
		Query:       in.Query,
		Connector:   in.Connector,
		Before:      state(in.Before, mask),
		After:       state(in.After, mask),
		Status:      in.Status,
	}
	if rec.Principal == "" {
		rec.Principal = Anonymous
	}
	if rec.Operation == "" {
		rec.Operation = UnknownOperation
	}
	if in.Status >= 400 {
		rec.Error = errorMessage(in.Body)
	}
	return rec
}

// state is s as a record shows it.
func state(s *Snapshot, mask Mask) *api.AuditState {
	if s == nil {
		return nil
	}
	config := maps.Clone(s.Config)
	if config == nil {
		config = map[string]string{}
	}
	if mask != nil {
		config = mask(config["connector.class"], config)
	}
	return &api.AuditState{Config: config, TargetState: restTarget(s.TargetState)}
}

// restTarget is a stored target state as REST names it: Kafka Connect
// stores RUNNING as STARTED.
func restTarget(stored string) string {
	if stored == records.TargetStarted {
		return api.StateRunning
	}
	return stored
}

// errorMessage is the message of an error body, or the body itself (cut
// short) when it is no JSON error body.
func errorMessage(body []byte) string {
	var e api.ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Message != nil {
		return *e.Message
	}
	const most = 1024
	if len(body) > most {
		return string(body[:most]) + "…"
	}
	return string(body)
}

// PasswordMask masks the values that the connector plugin of a config, the
// framework or its converters declare as PASSWORD, as Kafka Connect masks
// them. A config whose class reg does not know is returned as it is: a
// create with an unknown class fails before anything is stored.
func PasswordMask(reg *plugins.Registry) Mask {
	return func(_ string, config map[string]string) map[string]string {
		return validate.MaskPasswords(reg, config)
	}
}

package harness

import (
	"github.com/sluice-io/sluice/sluicetest"
)

// The in-process cluster and its helpers are the root module's test kit,
// package sluicetest; these names keep the suites that say harness.X
// compiling while they move to it. Each is the kit's, not a copy.

// Types of the kit (see package sluicetest).
type (
	// Options are sluicetest.Options.
	Options = sluicetest.Options
	// ConnectorHost is sluicetest.ConnectorHost.
	ConnectorHost = sluicetest.ConnectorHost
	// Cluster is sluicetest.Cluster.
	Cluster = sluicetest.Cluster
	// Backends are sluicetest.Backends.
	Backends = sluicetest.Backends
	// Outage is sluicetest.Outage.
	Outage = sluicetest.Outage
	// Record is sluicetest.Record.
	Record = sluicetest.Record
	// Response is sluicetest.Response.
	Response = sluicetest.Response
	// Status is sluicetest.Status.
	Status = sluicetest.Status
	// RawAnswer is sluicetest.RawAnswer.
	RawAnswer = sluicetest.RawAnswer
	// TestSecurity is sluicetest.TestSecurity.
	TestSecurity = sluicetest.TestSecurity
	// TestCA is sluicetest.TestCA.
	TestCA = sluicetest.TestCA
)

// Constants of the kit (see package sluicetest).
const (
	// KafkaEnv is sluicetest.KafkaEnv.
	KafkaEnv = sluicetest.KafkaEnv
	// KafkaSecurityEnv is sluicetest.KafkaSecurityEnv.
	KafkaSecurityEnv = sluicetest.KafkaSecurityEnv
	// KafkaMTLSEnv is sluicetest.KafkaMTLSEnv.
	KafkaMTLSEnv = sluicetest.KafkaMTLSEnv
	// CoordinatorUser is sluicetest.CoordinatorUser.
	CoordinatorUser = sluicetest.CoordinatorUser
	// LogLevel is sluicetest.LogLevel.
	LogLevel = sluicetest.LogLevel
)

// Functions of the kit (see package sluicetest).
var (
	// Start is sluicetest.Start.
	Start = sluicetest.Start
	// StartBackends is sluicetest.StartBackends.
	StartBackends = sluicetest.StartBackends
	// StartSecuredBackends is sluicetest.StartSecuredBackends.
	StartSecuredBackends = sluicetest.StartSecuredBackends
	// StartOutage is sluicetest.StartOutage.
	StartOutage = sluicetest.StartOutage
	// CreateTopic is sluicetest.CreateTopic.
	CreateTopic = sluicetest.CreateTopic
	// ReadLog is sluicetest.ReadLog.
	ReadLog = sluicetest.ReadLog
	// RealKafka is sluicetest.RealKafka.
	RealKafka = sluicetest.RealKafka
	// KafkaSecurity is sluicetest.KafkaSecurity.
	KafkaSecurity = sluicetest.KafkaSecurity
	// KafkaMTLS is sluicetest.KafkaMTLS.
	KafkaMTLS = sluicetest.KafkaMTLS
	// LoadTestSecurity is sluicetest.LoadTestSecurity.
	LoadTestSecurity = sluicetest.LoadTestSecurity
	// SecuredKafka is sluicetest.SecuredKafka.
	SecuredKafka = sluicetest.SecuredKafka
	// SecurityFor is sluicetest.SecurityFor.
	SecurityFor = sluicetest.SecurityFor
	// SecurityFlags is sluicetest.SecurityFlags.
	SecurityFlags = sluicetest.SecurityFlags
	// ClientOpts is sluicetest.ClientOpts.
	ClientOpts = sluicetest.ClientOpts
	// Series is sluicetest.Series.
	Series = sluicetest.Series
	// Value is sluicetest.Value.
	Value = sluicetest.Value
	// CanonOffsets is sluicetest.CanonOffsets.
	CanonOffsets = sluicetest.CanonOffsets
	// RawRequest is sluicetest.RawRequest.
	RawRequest = sluicetest.RawRequest
	// Do is sluicetest.Do.
	Do = sluicetest.Do
	// DoWith is sluicetest.DoWith.
	DoWith = sluicetest.DoWith
	// Eventually is sluicetest.Eventually.
	Eventually = sluicetest.Eventually
	// Consistently is sluicetest.Consistently.
	Consistently = sluicetest.Consistently
	// Hold is sluicetest.Hold.
	Hold = sluicetest.Hold
	// WaitKnowsLeader is sluicetest.WaitKnowsLeader.
	WaitKnowsLeader = sluicetest.WaitKnowsLeader
	// GetHealth is sluicetest.GetHealth.
	GetHealth = sluicetest.GetHealth
	// NewTestCA is sluicetest.NewTestCA.
	NewTestCA = sluicetest.NewTestCA
	// FreeAddr is sluicetest.FreeAddr.
	FreeAddr = sluicetest.FreeAddr
)

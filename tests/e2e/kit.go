package e2e

import (
	"github.com/sluice-io/sluice/sluicetest"
)

// The cluster of sluice processes and its helpers are the root module's
// test kit's (package sluicetest, its process mode); these names keep the
// suites that say e2e.X compiling while they move to it. Each is the
// kit's, not a copy.

// Types of the kit's process mode.
type (
	// Options are sluicetest.ProcessOptions.
	Options = sluicetest.ProcessOptions
	// Cluster is sluicetest.ProcessCluster.
	Cluster = sluicetest.ProcessCluster
	// Proc is sluicetest.Proc.
	Proc = sluicetest.Proc
	// Mark is sluicetest.Mark.
	Mark = sluicetest.Mark
	// Generator is sluicetest.Generator.
	Generator = sluicetest.Generator
	// Seqs are sluicetest.Seqs.
	Seqs = sluicetest.Seqs
)

// Constants of the kit's process mode.
const (
	// BinaryEnv is sluicetest.BinaryEnv.
	BinaryEnv = sluicetest.BinaryEnv
	// BuildTags are sluicetest.BuildTags.
	BuildTags = sluicetest.BuildTags
	// GeneratorClass is sluicetest.GeneratorClass.
	GeneratorClass = sluicetest.GeneratorClass
)

// Functions of the kit's process mode.
var (
	// StartCluster is sluicetest.StartProcesses.
	StartCluster = sluicetest.StartProcesses
	// BuildBinary is sluicetest.BuildBinary.
	BuildBinary = sluicetest.BuildBinary
	// NewProc is sluicetest.NewProc.
	NewProc = sluicetest.NewProc
	// NewProcOf is sluicetest.NewProcOf.
	NewProcOf = sluicetest.NewProcOf
	// StartProc is sluicetest.StartProc.
	StartProc = sluicetest.StartProc
	// FreeAddr is sluicetest.FreeAddr.
	FreeAddr = sluicetest.FreeAddr
	// UniquePrefix is sluicetest.UniquePrefix.
	UniquePrefix = sluicetest.UniquePrefix
	// WaitHealthy is sluicetest.WaitHealthy.
	WaitHealthy = sluicetest.WaitHealthy
	// ParseSeqs is sluicetest.ParseSeqs.
	ParseSeqs = sluicetest.ParseSeqs
	// FencedLines is sluicetest.FencedLines.
	FencedLines = sluicetest.FencedLines
)

// sample is sluicetest.Sample.
var sample = sluicetest.Sample
